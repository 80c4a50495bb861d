#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

@Suite struct SafeReadingTests {
    @Test("a symbolic link inside a package that points outside is read as a link, never followed")
    func linkOutsideIsNotFollowed() throws {
        let dir = try TemporaryDirectory()
        let secret = dir.appending("secret.txt")
        try put("TOP SECRET", at: secret)
        let outsideFolder = dir.appending("outside")
        try FileManager.default.createDirectory(at: outsideFolder, withIntermediateDirectories: true)
        try put("TOP SECRET TOO", at: outsideFolder.appendingPathComponent("inner.txt"))
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("absolute").path, withDestinationPath: secret.path)
        try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("relative").path, withDestinationPath: "../secret.txt")
        try FileManager.default.createSymbolicLink(
            atPath: url.appendingPathComponent("attachments/dir-link").path, withDestinationPath: outsideFolder.path)

        for options: FileWrapper.ReadingOptions in [[], .immediate, .mapped] {
            let read = try FileWrapper(contentsOf: url, options: options)
            #expect(read["absolute"]?.symbolicLinkDestination == secret.path)
            #expect(read["relative"]?.symbolicLinkDestination == "../secret.txt")
            let dirLink = read.fileWrapper(atPath: "attachments/dir-link")
            #expect(dirLink?.isSymbolicLink == true)
            #expect(read.fileWrapper(atPath: "attachments/dir-link/inner.txt") == nil)
            #expect(throws: DocumentKitError.self) { try read["absolute"]!.regularFileContents }
            #expect(!allBytes(of: read).contains("SECRET"))
        }
    }

    @Test("a member whose name is not UTF-8 makes reading the package an error naming it, so that no save loses it")
    func nonUTF8NameIsRefused() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        // A name no Swift string holds: the bytes FF FE, in the package and in a folder of it.
        for folder in ["", "attachments/"] {
            let path = Array((url.path + "/" + folder).utf8) + [0xFF, 0xFE, UInt8(ascii: "."), UInt8(ascii: "b"), 0]
            let fd = path.withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { Glibc.open($0, O_CREAT | O_WRONLY, 0o644) }
            }
            #expect(fd >= 0)
            Glibc.close(fd)
            do {
                _ = try FileWrapper(contentsOf: url)
                Issue.record("read a package holding a name that is not UTF-8")
            } catch {
                #expect(error.code == .corruptData && error.description.contains(url.path))
                #expect(error.description.contains("not valid UTF-8"))
                #expect(error.description.contains(folder.isEmpty ? "in the package" : "in the folder “attachments”"))
            }
            let unlinked = path.withUnsafeBufferPointer { bytes in
                bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { Glibc.unlink($0) }
            }
            #expect(unlinked == 0, "the member is still there")
        }
    }

    @Test("a member replaced by a symbolic link after a lazy read is not followed when it is read")
    func memberSwappedForLinkIsNotFollowed() throws {
        let dir = try TemporaryDirectory()
        let secret = dir.appending("secret.txt")
        try put("TOP SECRET", at: secret)
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        // The folder on the way becomes a link to a folder holding a file of the same name.
        let evil = dir.appending("evil")
        try FileManager.default.createDirectory(at: evil.appendingPathComponent("deep"), withIntermediateDirectories: true)
        try put("TOP SECRET", at: evil.appendingPathComponent("deep/b.txt"))
        try FileManager.default.removeItem(at: url.appendingPathComponent("attachments"))
        try FileManager.default.createSymbolicLink(atPath: url.appendingPathComponent("attachments").path, withDestinationPath: evil.path)
        let error = #expect(throws: DocumentKitError.self) { try read.fileWrapper(atPath: "attachments/deep/b.txt")!.regularFileContents }
        #expect(error?.description.contains("SECRET") == false)
        // The body, untouched, still reads.
        #expect(try text(read["body.md"]) == "the body")
    }

    @Test("a FIFO inside a package is refused as unsupportedFileType naming the member, without blocking")
    func fifoInsidePackage() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let fifo = url.appendingPathComponent("attachments/pipe")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        for options: FileWrapper.ReadingOptions in [[], .immediate] {
            let error = #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: url, options: options) }
            #expect(error?.code == .unsupportedFileType)
            #expect(error?.description.contains("attachments/pipe") == true)
            #expect(error?.description.contains(url.path) == true)
        }
    }

    @Test("a FIFO as the document itself is refused without blocking")
    func fifoAsDocument() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.appending("pipe.txt")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let error = #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: fifo) }
        #expect(error?.code == .unsupportedFileType)
        #expect(error?.description.contains(fifo.path) == true)
    }

    @Test("a package reached through a symbolic link reads the package it points to")
    func packageThroughLink() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let link = dir.appending("Link.pkg")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "Doc.pkg")
        let read = try FileWrapper(contentsOf: link)
        #expect(read.isDirectory)
        #expect(read == samplePackage())
        #expect(try text(read.fileWrapper(atPath: "attachments/deep/b.txt")) == "B")
        let file = dir.appending("note.txt")
        try put("hello", at: file)
        let fileLink = dir.appending("note-link.txt")
        try FileManager.default.createSymbolicLink(atPath: fileLink.path, withDestinationPath: file.path)
        #expect(try text(FileWrapper(contentsOf: fileLink)) == "hello")
    }

    @Test("symbolic links that loop are reported, not followed forever")
    func linkLoop() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.appending("a").path, withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: dir.appending("b").path, withDestinationPath: "a")
        let error = #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: dir.appending("a")) }
        #expect(error?.code == .symbolicLinkNotAllowed)
    }

    @Test("reading a missing item throws notFound naming it")
    func missing() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Nothing.pkg")
        let error = #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: url) }
        #expect(error?.code == .notFound)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.description.contains("ENOENT") == true)
    }
}

/// Every byte of every regular file in the tree, as text (links are not followed).
private func allBytes(of wrapper: FileWrapper) -> String {
    switch wrapper.kind {
    case .regularFile: return (try? text(wrapper)) ?? ""
    case .directory: return wrapper.fileWrappers!.values.map(allBytes(of:)).joined(separator: "|")
    case .symbolicLink: return ""
    }
}
