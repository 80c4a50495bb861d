#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

/// Large files stream: a file read on its own is referred to, copied into a save in pieces, and
/// hashed once per save (issue #14 §4).
@Suite struct StreamingTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory(prefix: "streaming") }

    /// An 8 MiB file of varied bytes: eight pieces.
    static let size = 8 << 20

    func largeFile(_ name: String, seed: UInt64 = 4) throws -> URL {
        var random = SeededRandom(seed: seed)
        let url = directory.appending(name)
        let words = (0..<Self.size / 8).map { _ in random.next() }
        try words.withUnsafeBytes { Data($0) }.write(to: url)
        return url
    }

    /// The `pread` calls the injector saw on the file at `path`.
    static func reads(of path: String, in faults: FaultInjector) -> Int {
        faults.trace.filter { $0.call == .read && $0.name == path }.count
    }

    @Test("a large file read on its own holds none of its bytes; read with .immediate, or small, it holds them")
    func largeFileIsReferredTo() throws {
        let url = try largeFile("big.bin")
        let wrapper = try FileWrapper(contentsOf: url)
        guard case .lazy(let lazy) = wrapper.storage else { Issue.record("not read from disk"); return }
        #expect(lazy.loaded == nil)
        #expect(wrapper.fileIdentity?.size == Int64(Self.size))
        guard case .lazy(let immediate) = try FileWrapper(contentsOf: url, options: .immediate).storage else { return }
        #expect(immediate.loaded?.count == Self.size)
        try put("small", at: directory.appending("small.txt"))
        guard case .lazy(let small) = try FileWrapper(contentsOf: directory.appending("small.txt")).storage else { return }
        #expect(small.loaded == Data("small".utf8))
        #expect(try wrapper.regularFileContents == Data(contentsOf: url))
    }

    @Test("a package save copies a large file read on its own in pieces of at most 1 MiB, and the copy is exact")
    func packageSaveCopiesInPieces() throws {
        let url = try largeFile("big.bin")
        let faults = FaultInjector()
        let attachment = try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem)
        let package = directory.appending("Doc.pkg")
        let saved = try folder(["body.md": file("body"), "attachments": folder(["big.bin": attachment])])
            .write(to: package, options: SaveOptions(durability: .consistent, fileSystem: faults.fileSystem))
        // Read as it was copied: a piece at a time, never whole.
        #expect(Self.reads(of: url.path, in: faults) >= Self.size / LazyFileContents.chunkSize)
        let copy = package.appendingPathComponent("attachments/big.bin")
        #expect(FileManager.default.contentsEqual(atPath: copy.path, andPath: url.path))
        // A copy, never a link: the file outside may be rewritten in place.
        #expect(try FileWrapper(contentsOf: copy).fileIdentity?.inode != attachment.fileIdentity?.inode)
        guard case .lazy(let savedContents) = saved.fileWrapper(atPath: "attachments/big.bin")?.storage else { return }
        #expect(savedContents.loaded == nil)
    }

    @Test("a file save of a large file read on its own copies it in pieces")
    func fileSaveCopiesInPieces() throws {
        let url = try largeFile("big.bin")
        let faults = FaultInjector()
        let wrapper = try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem)
        let destination = directory.appending("copy.bin")
        try wrapper.write(to: destination, options: SaveOptions(durability: .consistent, fileSystem: faults.fileSystem))
        #expect(Self.reads(of: url.path, in: faults) >= Self.size / LazyFileContents.chunkSize)
        #expect(FileManager.default.contentsEqual(atPath: destination.path, andPath: url.path))
    }

    @Test("a large file rewritten in place after it was read fails the save, which leaves the package as it was")
    func changedInPlaceFailsTheSave() throws {
        let url = try largeFile("big.bin")
        let package = directory.appending("Doc.pkg")
        try folder(["body.md": file("before")]).write(to: package)
        let attachment = try FileWrapper(contentsOf: url)
        // Same size, other bytes, same inode: only the change time tells.
        let handle = try FileHandle(forWritingTo: url)
        try handle.seek(toOffset: 1000)
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 4096))
        try handle.close()
        #expect {
            try folder(["body.md": file("after"), "big.bin": attachment]).write(to: package)
        } throws: { error in
            guard let error = error as? DocumentKitError else { return false }
            return error.code == .changedSinceRead && error.originalIsIntact == true && error.path == package.path
        }
        let after = try FileWrapper(contentsOf: package)
        #expect(after.fileWrappers?.keys.sorted() == ["body.md"])
        #expect(try after["body.md"]?.regularFileContents == Data("before".utf8))
    }

    @Test("a save hashes each large member once: a file read on its own while recorded, none that it then links")
    func eachLargeMemberHashedOncePerSave() throws {
        let url = try largeFile("big.bin")
        let faults = FaultInjector()
        let package = directory.appending("Doc.pkg")
        var tree = folder(["body.md": file("one"), "big.bin": try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem)])
        var hasher = MemberHasher()
        let options = SaveOptions(durability: .consistent, fileSystem: faults.fileSystem)

        // Save 1: the file is hashed while its record is made (read through the seam, in pieces),
        // then copied; hashed once (body.md is the other file hashed).
        let records = try hasher.memberRecords(of: tree, manifestName: "Info.json", packagePath: package.path)
        #expect(hasher.hashedFileCount == 2)
        let pieces = Self.size / LazyFileContents.chunkSize
        #expect(Self.reads(of: url.path, in: faults) >= pieces)
        var saved = try tree.write(to: package, options: options)
        hasher.rememberDigests(of: saved, members: records)

        // Save 2, another process: the open verifies it (one hash), the save records it from that
        // verification and links it: no read of it at all.
        let manifest = DocumentManifest(
            formatIdentifier: "com.example.streaming", formatVersion: 1, writer: .init(name: "StreamingTests", version: "1"),
            members: records)
        tree = try FileWrapper(contentsOf: package, fileSystem: faults.fileSystem)
        hasher = MemberHasher()
        #expect(try hasher.verify(tree, against: manifest, manifestName: "Info.json", packagePath: package.path).isComplete)
        #expect(hasher.hashedFileCount == 2)
        faults.reset()
        tree["body.md"] = file("two")
        _ = try hasher.memberRecords(of: tree, manifestName: "Info.json", previous: records, packagePath: package.path)
        saved = try tree.write(to: package, options: options)
        #expect(hasher.hashedFileCount == 3)  // the new body.md, not big.bin
        #expect(Self.reads(of: package.path + "/big.bin", in: faults) == 0)
        #expect(saved["big.bin"]?.fileIdentity?.inode == tree["big.bin"]?.fileIdentity?.inode)
    }
}
