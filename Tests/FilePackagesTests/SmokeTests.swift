import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

@Suite struct PackageRoundTripTests {
    @Test("a saved package reads back equal, and unchanged members are hard-linked on the next save")
    func roundTrip() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Trip.note")
        var tree = FileWrapper(directoryWithFileWrappers: [
            "body.md": FileWrapper(regularFileWithContents: Data("hello".utf8)),
            "attachments": FileWrapper(directoryWithFileWrappers: [
                "a.txt": FileWrapper(regularFileWithContents: Data("A".utf8))
            ]),
        ])
        try tree.write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(try read.fileWrapper(atPath: "attachments/a.txt")?.regularFileContents == Data("A".utf8))
        let inodeBefore = read.fileWrapper(atPath: "attachments/a.txt")!.fileIdentity!.inode
        tree = read
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("changed".utf8))
        let saved = try tree.write(to: url)
        let again = try FileWrapper(contentsOf: url)
        #expect(again.fileWrapper(atPath: "attachments/a.txt")!.fileIdentity!.inode == inodeBefore)
        #expect(try again["body.md"]?.regularFileContents == Data("changed".utf8))
        #expect(saved == again)
        #expect(try dir.contents() == ["Trip.note"])
    }
}
