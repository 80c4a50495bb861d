import DocumentKit
import DocumentKitTesting
@testable import FilePackages
import Foundation
import Testing

/// Reading the members of a tree opens each folder once, not once per member (issue #14).
@Suite("Member folders")
struct MemberFolderTests {
    @Test("reading 100 members of one folder walks down to the folder once")
    func folderOpenedOnce() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Doc.test")
        var attachments: [String: FileWrapper] = [:]
        for index in 0..<100 { attachments["a\(index).txt"] = FileWrapper(regularFileWithContents: Data("attachment \(index)".utf8)) }
        try FileWrapper(directoryWithFileWrappers: [
            "attachments": FileWrapper(directoryWithFileWrappers: ["nested": FileWrapper(directoryWithFileWrappers: attachments)]),
        ]).write(to: url)
        let tree = try FileWrapper(contentsOf: url)
        let members = tree.fileWrapper(atPath: "attachments/nested")?.fileWrappers?.values.compactMap(\.origin) ?? []
        #expect(members.count == 100)

        let faults = FaultInjector()
        for origin in members {
            let folder = try origin.openParentDirectory(using: faults.fileSystem)
            defer { close(folder) }
            let status = try faults.fileSystem.status(of: origin.components.last!, in: folder)
            #expect(status.identity == origin.identity)
        }
        // "." of the root, "attachments", "nested": once for all 100 members; then one "." in
        // the kept folder per member (the caller's own descriptor). Walking down for each
        // member made 300.
        let opens = faults.trace.filter { $0.call == .open }
        #expect(opens.count == 3 + 100, "\(opens.count) opens")
        // And each member's contents read through its kept folder are its own.
        #expect(try tree.fileWrapper(atPath: "attachments/nested/a42.txt")?.regularFileContents == Data("attachment 42".utf8))
    }
}
