// Identity is the file, not the string: every spelling of a path that the kernel takes to one
// item is one item to the coordinator; two names the file system keeps apart are two items.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Items are identified by the file, not the string")
struct ItemIdentityTests {
    /// One way to spell an item: a child writes it through `writePath`, this process reads it
    /// through `readPath` (both relative to the item folder, joined with a plain "/").
    struct Spelling: Sendable, CustomStringConvertible {
        var description: String
        var writePath: String
        var readPath: String
        /// The item, relative to the item folder, as the accessor must get it.
        var resolved: String
        var readOptions: CoordinatedReadingOptions = []
    }

    static let spellings: [Spelling] = [
        Spelling(description: "a symbolic link to its folder", writePath: "real/doc.txt", readPath: "link/doc.txt", resolved: "real/doc.txt"),
        Spelling(description: "'.' components", writePath: "real/doc.txt", readPath: "./real/./doc.txt", resolved: "real/doc.txt"),
        Spelling(description: "'..' components", writePath: "real/doc.txt", readPath: "real/inner/../doc.txt", resolved: "real/doc.txt"),
        Spelling(description: "'..' after a symbolic link", writePath: "real/doc.txt", readPath: "deep/../doc.txt", resolved: "real/doc.txt"),
        Spelling(description: "repeated slashes", writePath: "real/doc.txt", readPath: "/real///doc.txt", resolved: "real/doc.txt"),
        Spelling(description: "a trailing slash", writePath: "real/inner", readPath: "real/inner/", resolved: "real/inner"),
        Spelling(description: "a folder named with a trailing '..'", writePath: "real", readPath: "real/inner/..", resolved: "real"),
        Spelling(
            description: "a symbolic link to the item, read with resolvesSymbolicLink", writePath: "real/doc.txt", readPath: "doc-link",
            resolved: "real/doc.txt", readOptions: .resolvesSymbolicLink),
    ]

    /// real/doc.txt, real/inner/, link → real, deep → real/inner, doc-link → real/doc.txt.
    func makeItems(_ fixture: Fixture) throws {
        try fixture.makeFile("real/doc.txt")
        try fixture.makeFolder("real/inner")
        let manager = FileManager.default
        try manager.createSymbolicLink(atPath: fixture.url("link").path, withDestinationPath: "real")
        try manager.createSymbolicLink(atPath: fixture.url("deep").path, withDestinationPath: "real/inner")
        try manager.createSymbolicLink(atPath: fixture.url("doc-link").path, withDestinationPath: "real/doc.txt")
    }

    @Test("A write through one spelling makes a read through another wait", arguments: spellings)
    func spellingsMeetOnOneItem(spelling: Spelling) async throws {
        let fixture = try Fixture()
        try makeItems(fixture)
        let writer = try fixture.hold("write", fixture.items.url.path + "/" + spelling.writePath, milliseconds: 30_000)
        try #require(await writer.wait(for: "granted", timeout: .seconds(20)) != nil, "\(writer.errorOutput)")
        let readURL = URL(fileURLWithPath: fixture.items.url.path + "/" + spelling.readPath)

        #expect(throws: DocumentKitError.self) {
            do {
                try fixture.coordinator.coordinate(readingItemAt: readURL, options: spelling.readOptions, timeout: .milliseconds(300)) { _ in }
            } catch {
                #expect(isBusy(error), "\(error)")
                throw error
            }
        }

        writer.release()
        #expect(await writer.exitStatus(timeout: .seconds(10)) == 0)
        let seen = try fixture.coordinator.coordinate(readingItemAt: readURL, options: spelling.readOptions, timeout: .seconds(5)) { $0 }
        #expect(seen.path == fixture.url(spelling.resolved).path)
    }

    @Test("A folder replaced at the same path is the new folder at once, though the path was just coordinated")
    func replacedFolderIsResolvedAgain() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a/doc.txt", "old")
        let path = fixture.url("a/doc.txt")
        // Resolved and remembered by this process.
        try fixture.coordinator.coordinate(readingItemAt: path) { _ in }
        try FileManager.default.moveItem(at: fixture.url("a"), to: fixture.url("b"))
        try fixture.makeFile("a/doc.txt", "new")
        let writer = try fixture.hold("write", path.path, milliseconds: 30_000)
        try #require(await writer.wait(for: "granted", timeout: .seconds(20)) != nil, "\(writer.errorOutput)")

        // The held item is the new a/doc.txt: a read through the same string waits for it...
        #expect(throws: DocumentKitError.self) {
            try fixture.coordinator.coordinate(readingItemAt: path, timeout: .milliseconds(300)) { _ in }
        }
        // ...and the old one, now b/doc.txt, is another item: no wait.
        let old = try fixture.coordinator.coordinate(readingItemAt: fixture.url("b/doc.txt"), timeout: .milliseconds(300)) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(old == "old")
        writer.release()
        #expect(await writer.exitStatus(timeout: .seconds(10)) == 0)
    }

    @Test("'notes' and 'Notes' in a case-sensitive folder are two items: no wait")
    func caseSensitiveNamesAreDistinct() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("notes", "lower")
        try fixture.makeFile("Notes", "upper")
        let writer = try fixture.hold("write", fixture.url("notes").path, milliseconds: 30_000)
        try #require(await writer.wait(for: "granted", timeout: .seconds(20)) != nil, "\(writer.errorOutput)")
        let text = try fixture.coordinator.coordinate(readingItemAt: fixture.url("Notes"), timeout: .milliseconds(300)) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "upper")
        #expect(throws: DocumentKitError.self) {
            try fixture.coordinator.coordinate(readingItemAt: fixture.url("notes"), timeout: .milliseconds(100)) { _ in }
        }
        writer.release()
    }
}
