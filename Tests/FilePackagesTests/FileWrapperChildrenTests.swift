import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Issue #13 §5: the children API of Apple's `FileWrapper` (`addRegularFile`, `preferredFilename`,
/// `removeFileWrapper`, `needsToBeUpdated(fromPath:)`).
@Suite struct FileWrapperChildrenTests {
    @Test("addRegularFile files the contents under the preferred name, or the next free one, and returns it")
    func addRegularFileReturnsTheNameUsed() throws {
        var package = FileWrapper(directoryWithFileWrappers: [:])
        let first = package.addRegularFile(withContents: Data("one".utf8), preferredFilename: "notes.txt")
        let second = package.addRegularFile(withContents: Data("two".utf8), preferredFilename: "notes.txt")
        let third = package.addRegularFile(withContents: Data("three".utf8), preferredFilename: "notes.txt")
        #expect([first, second, third] == ["notes.txt", "notes 2.txt", "notes 3.txt"])
        #expect(try package["notes 2.txt"]?.regularFileContents == Data("two".utf8))
        #expect(package["notes 3.txt"]?.preferredFilename == "notes 3.txt")
    }

    @Test("addFileWrapper uses the child's preferredFilename")
    func addFileWrapperUsesThePreferredName() {
        var package = FileWrapper(directoryWithFileWrappers: [:])
        var folder = FileWrapper(directoryWithFileWrappers: [:])
        folder.preferredFilename = "attachments"
        #expect(package.addFileWrapper(folder) == "attachments")
        #expect(package["attachments"]?.isDirectory == true)
    }

    @Test("a wrapper read from disk prefers the names it was read under")
    func readWrappersKnowTheirNames() throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("doc.pkg")
        var tree = FileWrapper(directoryWithFileWrappers: [:])
        tree.addRegularFile(withContents: Data("body".utf8), preferredFilename: "body.md")
        try tree.write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(read.preferredFilename == "doc.pkg")
        #expect(read["body.md"]?.preferredFilename == "body.md")
    }

    @Test("removeFileWrapper removes that child and leaves the others")
    func removeFileWrapperRemovesTheChild() throws {
        var package = FileWrapper(directoryWithFileWrappers: [:])
        package.addRegularFile(withContents: Data("keep".utf8), preferredFilename: "a.txt")
        package.addRegularFile(withContents: Data("drop".utf8), preferredFilename: "b.txt")
        let child = try #require(package["b.txt"])
        package.removeFileWrapper(child)
        #expect(package.fileWrappers?.keys.sorted() == ["a.txt"])
        // A child equal to none of them removes nothing.
        package.removeFileWrapper(FileWrapper(regularFileWithContents: Data("other".utf8)))
        #expect(package.fileWrappers?.keys.sorted() == ["a.txt"])
    }

    @Test("needsToBeUpdated(fromPath:) is false for the item as read and true once a member changed, appeared or went")
    func needsToBeUpdatedFollowsTheItemOnDisk() throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("doc.pkg")
        var tree = FileWrapper(directoryWithFileWrappers: [:])
        tree.addRegularFile(withContents: Data("body".utf8), preferredFilename: "body.md")
        try tree.write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(!read.needsToBeUpdated(fromPath: url.path))

        try Data("body, edited".utf8).write(to: url.appendingPathComponent("body.md"))
        #expect(read.needsToBeUpdated(fromPath: url.path))

        let again = try FileWrapper(contentsOf: url)
        try Data("new".utf8).write(to: url.appendingPathComponent("extra.md"))
        #expect(again.needsToBeUpdated(fromPath: url.path))
        #expect(again.needsToBeUpdated(fromPath: folder.appending("missing.pkg").path))
    }
}
