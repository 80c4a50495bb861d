#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

@Suite struct TreeModelTests {
    @Test("each kind reports itself and only its own accessors answer")
    func kinds() throws {
        let regular = file("x")
        let directory = folder(["x": regular])
        let link = FileWrapper(symbolicLinkWithDestination: "../elsewhere")
        #expect(regular.kind == .regularFile && regular.isRegularFile && !regular.isDirectory && !regular.isSymbolicLink)
        #expect(directory.kind == .directory && directory.isDirectory && directory.fileWrappers?.count == 1)
        #expect(link.kind == .symbolicLink && link.isSymbolicLink && link.symbolicLinkDestination == "../elsewhere")
        #expect(regular.fileWrappers == nil && regular.symbolicLinkDestination == nil)
        #expect(directory.symbolicLinkDestination == nil && link.fileWrappers == nil)
        #expect(try regular.regularFileContents == Data("x".utf8))
        #expect(throws: DocumentKitError.self) { try directory.regularFileContents }
        #expect(throws: DocumentKitError.self) { try link.regularFileContents }
        #expect(regular.fileIdentity == nil && regular.modificationDate == nil)
    }

    @Test("the subscript and fileWrapper(atPath:) find, add, replace and remove members")
    func subscripts() throws {
        var tree = samplePackage()
        #expect(try text(tree["body.md"]) == "the body")
        #expect(try text(tree.fileWrapper(atPath: "attachments/deep/b.txt")) == "B")
        #expect(try text(tree.fileWrapper(atPath: "./attachments/a.txt")) == "A")
        #expect(tree.fileWrapper(atPath: "attachments/missing") == nil)
        #expect(tree.fileWrapper(atPath: "body.md/inside") == nil)
        #expect(tree.fileWrapper(atPath: "") == tree)
        tree["new.txt"] = file("new")
        tree["body.md"] = file("changed")
        tree["Info.json"] = nil
        tree["attachments"]?["deep"]?["c.txt"] = file("C")
        #expect(Set(tree.fileWrappers!.keys) == ["new.txt", "body.md", "attachments"])
        #expect(try text(tree["body.md"]) == "changed")
        #expect(try text(tree.fileWrapper(atPath: "attachments/deep/c.txt")) == "C")
    }

    @Test("in-memory wrappers are equal by kind, names, bytes and permissions")
    func equalityInMemory() {
        #expect(file("a") == file("a"))
        #expect(file("a") != file("b"))
        #expect(file("a", permissions: 0o600) != file("a", permissions: 0o644))
        #expect(samplePackage() == samplePackage())
        var other = samplePackage()
        other["attachments"]?["deep"]?["b.txt"] = file("changed")
        #expect(samplePackage() != other)
        other = samplePackage()
        other["extra"] = file("")
        #expect(samplePackage() != other)
        #expect(FileWrapper(symbolicLinkWithDestination: "a") == FileWrapper(symbolicLinkWithDestination: "a"))
        #expect(FileWrapper(symbolicLinkWithDestination: "a") != FileWrapper(symbolicLinkWithDestination: "b"))
        #expect(file("a") != folder([:]))
        #expect(folder([:]) != FileWrapper(symbolicLinkWithDestination: "a"))
    }

    @Test("files read from disk are equal by identity, without reading their contents")
    func equalityByIdentity() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let first = try FileWrapper(contentsOf: url)
        let second = try FileWrapper(contentsOf: url)
        // Remove the members: comparing must not need to read them.
        try FileManager.default.removeItem(at: url)
        #expect(first == second)
        #expect(first.fileWrapper(atPath: "attachments/deep/b.txt")?.fileIdentity != nil)
        // Contents were never loaded, and the files are gone: reading them now fails.
        #expect(throws: DocumentKitError.self) { try first["body.md"]!.regularFileContents }
    }

    @Test("a package read back equals the tree that was saved, and the wrapper the save returned")
    func equalityAfterRoundTrip() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        let saved = try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(read == samplePackage())
        #expect(read == saved)
        #expect(read.isDirectory && read.modificationDate != nil && read.permissions != nil)
        #expect(read.fileWrapper(atPath: "body.md")?.permissions == mode(url.appendingPathComponent("body.md")))
    }

    @Test("lazy reading reads members when asked; .immediate reads them at once")
    func lazyAndImmediate() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let lazy = try FileWrapper(contentsOf: url)
        let immediate = try FileWrapper(contentsOf: url, options: .immediate)
        let member = { (tree: FileWrapper) -> LazyFileContents? in
            if case .lazy(let contents) = tree.fileWrapper(atPath: "attachments/deep/b.txt")?.storage { return contents }
            return nil
        }
        #expect(member(lazy)?.loaded == nil)
        #expect(member(immediate)?.loaded == Data("B".utf8))
        // After the file disappears, only the immediate read still has the bytes.
        try FileManager.default.removeItem(at: url)
        #expect(try text(immediate.fileWrapper(atPath: "attachments/deep/b.txt")) == "B")
        #expect(throws: DocumentKitError.self) { try lazy.fileWrapper(atPath: "attachments/deep/b.txt")!.regularFileContents }
    }

    @Test("lazily read contents are read once and kept")
    func lazyIsCached() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(try text(read["body.md"]) == "the body")
        try FileManager.default.removeItem(at: url)
        #expect(try text(read["body.md"]) == "the body")
    }

    @Test(".mapped maps a member of 64 KiB and more into memory, with the right bytes")
    func mapped() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Big.pkg")
        let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try folder(["big.bin": FileWrapper(regularFileWithContents: big), "small.txt": file("s")]).write(to: url)
        let read = try FileWrapper(contentsOf: url, options: .mapped)
        let contents = try read["big.bin"]!.regularFileContents
        #expect(contents == big)
        #expect(try text(read["small.txt"]) == "s")
        #expect(memoryMaps().contains(url.appendingPathComponent("big.bin").path), "the member is not memory-mapped")
        withExtendedLifetime(contents) {}
    }

    @Test("matchesContents(of:) is true after a read and a save, false after an external change")
    func matchesContents() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        let saved = try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        #expect(read.matchesContents(of: url))
        #expect(saved.matchesContents(of: url))
        try replaceByRename(url.appendingPathComponent("attachments/a.txt"), with: "X")
        #expect(!read.matchesContents(of: url))
        let again = try FileWrapper(contentsOf: url)
        #expect(again.matchesContents(of: url))
        try put("added", at: url.appendingPathComponent("extra.txt"))
        #expect(!again.matchesContents(of: url))
        #expect(!again.matchesContents(of: dir.appending("missing")))
    }

    @Test("matchesContents(of:) sees an in-place rewrite that restored the modification time (by ctime)")
    func matchesContentsCatchesInPlaceRewrite() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        let body = url.appendingPathComponent("body.md")
        usleep(20_000)
        try rewriteInPlaceKeepingModificationTime(body, with: "THE BODY")  // same size, same mtime
        #expect(!read.matchesContents(of: url))
        #expect(throws: DocumentKitError.self) { try read["body.md"]!.regularFileContents }

        let single = dir.appending("note.txt")
        try file("original").write(to: single)
        let readFile = try FileWrapper(contentsOf: single)
        #expect(readFile.matchesContents(of: single))
        usleep(20_000)
        try rewriteInPlaceKeepingModificationTime(single, with: "ORIGINAL")
        #expect(!readFile.matchesContents(of: single))
    }

    @Test("a lazily read member replaced before it was read throws changedSinceRead naming it")
    func changedSinceRead() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let read = try FileWrapper(contentsOf: url)
        try replaceByRename(url.appendingPathComponent("attachments/deep/b.txt"), with: "other")
        let error = #expect(throws: DocumentKitError.self) {
            try read.fileWrapper(atPath: "attachments/deep/b.txt")!.regularFileContents
        }
        #expect(error?.code == .changedSinceRead)
        #expect(error?.description.contains("attachments/deep/b.txt") == true)
        // A save of the stale tree refuses too, and leaves the package alone.
        let before = snapshot(url)
        let saveError = #expect(throws: DocumentKitError.self) { try read.write(to: url) }
        #expect(saveError?.code == .changedSinceRead)
        #expect(snapshot(url) == before)
        #expect(litter(in: dir.url).isEmpty)
    }
}

/// `/proc/self/maps`, read to its end (it reports size 0, so it is read in a loop).
private func memoryMaps() -> String {
    let fd = open("/proc/self/maps", O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = Glibc.read(fd, &buffer, buffer.count)
        if count <= 0 { break }
        bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
