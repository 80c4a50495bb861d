import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite struct VersionStoreSmokeTests {
    @Test func keepsTheReplacedPackageAndRestoresIt() throws {
        let folder = try TemporaryDirectory()
        let item = folder.url.appendingPathComponent("trip.note", isDirectory: true)
        let first = FileWrapper(directoryWithFileWrappers: ["body.md": FileWrapper(regularFileWithContents: Data("one".utf8))])
        try first.write(to: item)
        let store = VersionStore(libraryURL: folder.url)
        let second = FileWrapper(directoryWithFileWrappers: ["body.md": FileWrapper(regularFileWithContents: Data("two".utf8))])
        let (_, kept) = try store.save(second, to: item, keepingReplacedAs: .save)
        let version = try #require(kept)
        #expect(try String(contentsOf: version.url.appendingPathComponent("body.md"), encoding: .utf8) == "one")
        let listing = try store.versions(ofItemAt: item)
        #expect(listing.others.map(\.persistentIdentifier) == [version.persistentIdentifier])
        #expect(listing.problems.isEmpty)
        try store.replaceItem(at: item, with: version)
        #expect(try String(contentsOf: item.appendingPathComponent("body.md"), encoding: .utf8) == "one")
        #expect(try store.versions(ofItemAt: item).others.count == 2)
    }
}
