#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Versions of a package share the members they have in common, with each other and with the
/// current package: keeping a version costs about the files that changed, not the package.
@Suite("Version store sharing", .timeLimit(.minutes(2)))
struct VersionStoreSharingTests {
    static let memberCount = 500
    static let saves = 20
    static let memberSize = 4096

    static func memberPath(_ index: Int) -> String { "part-\(index % 5)/member-\(index).bin" }

    /// The distinct inodes of the regular files and folders under `roots`, and their blocks.
    struct Usage {
        var files = Set<UInt64>()
        var folders = Set<UInt64>()
        var blocks: Int64 = 0

        init(_ roots: [URL]) throws {
            for root in roots {
                try add(root.path)
                let enumerator = FileManager.default.enumerator(atPath: root.path)
                while let relative = enumerator?.nextObject() as? String { try add(root.path + "/" + relative) }
            }
        }

        mutating func add(_ path: String) throws {
            let info = try status(path)
            let inode = UInt64(info.st_ino)
            let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
            let (inserted, _) = isFolder ? folders.insert(inode) : files.insert(inode)
            if inserted { blocks += Int64(info.st_blocks) }
        }

        var bytes: Int64 { blocks * 512 }
    }

    @Test func twentyVersionsOfA500FilePackageCostAboutTwentyFiles() throws {
        let library = try VersionLibrary()
        var random = SeededRandom(seed: 2026)
        func randomData() -> Data { Data((0..<Self.memberSize).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        var initial = FileWrapper(directoryWithFileWrappers: [:])
        for index in 0..<Self.memberCount {
            VersionLibrary.set(&initial, Self.memberPath(index).split(separator: "/")[...], FileWrapper(regularFileWithContents: randomData()))
        }
        let item = library.item("Big.pkg")
        try initial.write(to: item)
        let packageUsage = try Usage([item])
        #expect(packageUsage.files.count == Self.memberCount)

        let store = library.store()
        var kept: [FileVersion] = []
        for save in 0..<Self.saves {
            var tree = try FileWrapper(contentsOf: item)
            let changed = Self.memberPath(save * 7)
            VersionLibrary.set(&tree, changed.split(separator: "/")[...], FileWrapper(regularFileWithContents: randomData()))
            let version = try #require(try store.save(tree, to: item, keepingReplacedAs: .save).kept)
            kept.append(version)
        }
        let listing = try store.versions(ofItemAt: item)
        #expect(listing.others.count == Self.saves)
        #expect(Set(listing.others.map(\.persistentIdentifier)) == Set(kept.map(\.persistentIdentifier)))
        #expect(listing.problems.isEmpty)

        // 500 members in the package; in the store 500 private copies made by the first save
        // (format 2: versions never share a file with the document), one new file per later
        // save, one record per version, store.json and the document's lock file.
        let usage = try Usage([item, library.storeURL])
        #expect(usage.files.count == 2 * Self.memberCount + (Self.saves - 1) + Self.saves + 2)

        // No version's member is the current package's file; versions share among themselves.
        for version in kept {
            var shared = 0
            for index in 0..<Self.memberCount {
                let path = Self.memberPath(index)
                let inVersion = version.url.appendingPathComponent(path)
                let inCurrent = item.appendingPathComponent(path)
                let same = try Data(contentsOf: inVersion) == Data(contentsOf: inCurrent)
                #expect(try inode(inVersion.path) != inode(inCurrent.path), "\(version.persistentIdentifier) \(path)")
                if same { shared += 1 }
            }
            // Version k (kept by save k) has the members saves k..<20 changed since: 20 - k of them.
            let k = kept.firstIndex(of: version)!
            #expect(shared == Self.memberCount - (Self.saves - k))
        }

        // The disk: one private copy of the package, then about one member (plus the version's
        // record and folders) per version.
        let growth = usage.bytes - 2 * packageUsage.bytes
        let perVersion = growth / Int64(Self.saves)
        let memberBytes = Int64(try status(item.appendingPathComponent(Self.memberPath(1)).path).st_blocks) * 512
        #expect(perVersion >= memberBytes)
        #expect(perVersion < packageUsage.bytes / 10, "each version costs \(perVersion) bytes; the package \(packageUsage.bytes)")
        #expect(perVersion < memberBytes + 64 * 1024, "each version costs \(perVersion) bytes; a member \(memberBytes)")
    }
}
