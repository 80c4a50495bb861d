import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The cache file is a cache: damaged, foreign, newer or unusable, the answers stay right and
/// nothing throws; processes share it without losing records.
@Suite("Member digest cache file")
struct DigestCacheFileTests {
    enum Damage: String, CaseIterable, Sendable {
        case garbage, truncated, foreign, newer
    }

    /// Makes a cache file in `folder` with a record for `package`, then damages it.
    static func damage(_ damage: Damage, folder: URL, package: URL) throws {
        let file = folder.appendingPathComponent(PersistentMemberDigestCache.fileName)
        switch damage {
        case .garbage:
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: 8192).write(to: file)
        case .truncated:
            let cache = PersistentMemberDigestCache(folderURL: folder)
            for index in 0..<30 { _ = try DigestFixture.verify(package, cache: cache); _ = index }
            // Many rows, so that the file has pages to lose; then its end cut off.
            for index in 0..<200 {
                cache.record(cache.digests(forPackageAt: package.path), forPackageAt: "/other/\(index).test")
            }
            #expect(sqlite(file, "PRAGMA wal_checkpoint(TRUNCATE);") != nil)
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! Int
            #expect(size > 16384)
            #expect(truncate(file.path, off_t(size / 3)) == 0)
        case .foreign:
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            #expect(sqlite(file, "CREATE TABLE package (path TEXT, something BLOB); INSERT INTO package VALUES ('x', x'00');") != nil)
        case .newer:
            _ = try DigestFixture.verify(package, cache: PersistentMemberDigestCache(folderURL: folder))
            #expect(sqlite(file, "PRAGMA user_version = 2;") != nil)
        }
    }

    /// Runs `sql` with the sqlite3 tool on `file`; its output, nil if it failed.
    static func sqlite(_ file: URL, _ sql: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [file.path, sql]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    @Test("a damaged, truncated, foreign or newer cache file gives right answers, and is moved aside and rebuilt with a notice", arguments: Damage.allCases)
    func damagedFileRebuilt(_ damage: Damage) throws {
        let directory = try TemporaryDirectory()
        let package = directory.appending("Doc.test")
        try DigestFixture.makePackage(at: package, count: 50)
        let folder = directory.appending("cache")
        try Self.damage(damage, folder: folder, package: package)
        // A member changed since (same size): a damaged cache must not hide it.
        try DigestFixture.rewriteInPlace(package.appendingPathComponent("m00003.txt"), with: Data("MEMBER 3\n".utf8))

        let cache = PersistentMemberDigestCache(folderURL: folder)
        let result = try DigestFixture.verify(package, cache: cache)
        #expect(result.verification.mismatchedMembers == ["m00003.txt"])
        #expect(result.verification.matchingCount == 49)
        #expect(cache.isAvailable)
        #expect(cache.notices.count == 1, "\(cache.notices)")
        #expect(cache.notices.first?.contains("moved aside and rebuilt") == true, "\(cache.notices)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(PersistentMemberDigestCache.fileName + ".aside").path))
        // Rebuilt: it serves the next process, which reads only the member that disagrees with
        // the manifest (a cached digest stands only for one that agrees).
        DigestFixture.waitUntilOld()
        _ = try DigestFixture.verify(package, cache: cache)
        let next = try DigestFixture.verify(package, cache: PersistentMemberDigestCache(folderURL: folder))
        #expect(next.hashed == 1)
        #expect(next.verification.mismatchedMembers == ["m00003.txt"])
    }

    @Test("a cache folder that can't be used means no cache and one notice, never an error")
    func unusableFolder() throws {
        let directory = try TemporaryDirectory()
        let package = directory.appending("Doc.test")
        try DigestFixture.makePackage(at: package, count: 10)
        // A file where the folder's parent should be: nothing can be made there.
        try Data("not a folder".utf8).write(to: directory.appending("blocked"))
        let cache = PersistentMemberDigestCache(folderURL: directory.appending("blocked/cache"))
        for _ in 0..<3 {
            let result = try DigestFixture.verify(package, cache: cache)
            #expect(result.verification.isComplete)
            #expect(result.hashed == 10)
        }
        #expect(!cache.isAvailable)
        #expect(cache.notices.count == 1, "\(cache.notices)")
    }

    @Test("a cache folder other users may change is refused: no cache, one notice")
    func untrustedFolder() throws {
        let directory = try TemporaryDirectory()
        let package = directory.appending("Doc.test")
        try DigestFixture.makePackage(at: package, count: 4)
        let folder = directory.appending("shared-cache")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(chmod(folder.path, 0o777) == 0)
        let cache = PersistentMemberDigestCache(folderURL: folder)
        #expect(try DigestFixture.verify(package, cache: cache).verification.isComplete)
        #expect(!cache.isAvailable)
        #expect(cache.notices.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(PersistentMemberDigestCache.fileName).path))
    }

    @Test("two processes recording digests in one cache file at once lose none of them")
    func twoProcessesRecord() throws {
        let directory = try TemporaryDirectory()
        var packages: [String] = []
        for index in 0..<40 {
            let url = directory.appending(String(format: "p%02d.test", index))
            try DigestFixture.makePackage(at: url, count: 25, waitingUntilOld: false)
            packages.append(url.path)
        }
        DigestFixture.waitUntilOld()
        let folder = directory.appending("cache")
        // Each child verifies every package, in opposite orders: both write all the time.
        let children = [packages, packages.reversed()].map { list in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: DigestChild.executable)
            process.arguments = [folder.path, DigestFixture.format.manifestName] + list
            let output = Pipe()
            process.standardOutput = output
            return (process, output)
        }
        for (process, _) in children { try process.run() }
        for (process, output) in children {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.hasPrefix("hashed "), "\(text)")
            #expect(!text.contains("notices"), "\(text)")
        }
        // Every package's digests were kept: this process reads no member of any.
        let cache = PersistentMemberDigestCache(folderURL: folder)
        var hashed = 0
        for path in packages {
            let result = try DigestFixture.verify(URL(fileURLWithPath: path), cache: cache)
            #expect(result.verification.isComplete)
            hashed += result.hashed
        }
        #expect(hashed == 0)
    }
}

/// The built `dk-digest-child`, beside the test runner.
enum DigestChild {
    static let executable: String = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = me.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("dk-digest-child")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory.deleteLastPathComponent()
        }
        fatalError("dk-digest-child not found near \(me.path); build with `swift build --build-tests`")
    }()
}
