import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The persistent member digest cache: a package in which nothing changed is opened without
/// reading its members, and no change to a member is missed for it (issue #14 §2).
@Suite("Member digest cache")
struct DigestCacheTests {
    @Test("a new hasher with the persistent cache reads no member of an unchanged package")
    func unchangedPackageReadsNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Many.test")
        try DigestFixture.makePackage(at: url, count: 300)
        let cache = PersistentMemberDigestCache(folderURL: directory.appending("cache"))

        let first = try DigestFixture.verify(url, cache: cache)
        #expect(first.verification.isComplete)
        #expect(first.hashed == 300)
        // Another hasher (as in another process: a second cache object on the same file) reads none.
        let second = try DigestFixture.verify(url, cache: PersistentMemberDigestCache(folderURL: directory.appending("cache")))
        #expect(second.verification.isComplete)
        #expect(second.verification.matchingCount == 300)
        #expect(second.hashed == 0)
        #expect(cache.notices.isEmpty)
    }

    @Test("a member rewritten in place with a new modification time is read again and found different")
    func inPlaceChangeWithNewTime() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Changed.test")
        try DigestFixture.makePackage(at: url, count: 20)
        let cache = PersistentMemberDigestCache(folderURL: directory.appending("cache"))
        #expect(try DigestFixture.verify(url, cache: cache).hashed == 20)

        try DigestFixture.rewriteInPlace(url.appendingPathComponent("m00007.txt"), with: Data("MEMBER 7\n".utf8))
        let after = try DigestFixture.verify(url, cache: cache)
        #expect(after.verification.mismatchedMembers == ["m00007.txt"])
        #expect(after.hashed == 1)
    }

    @Test("a member rewritten in place within the timestamp tick of its hashing, even with its modification time set back, is found different")
    func changeWithinTheSameTick() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Racy.test")
        try DigestFixture.makePackage(at: url, count: 5)
        let cache = PersistentMemberDigestCache(folderURL: directory.appending("cache"))
        #expect(try DigestFixture.verify(url, cache: cache).hashed == 5)
        let member = url.appendingPathComponent("m00002.txt")
        for round in 0..<5 {
            // Written, hashed and recorded, rewritten with the same size: all at once.
            try DigestFixture.rewriteInPlace(member, with: Data("member \(round)\n".utf8))
            let written = DigestFixture.status(member)
            _ = try DigestFixture.verify(url, cache: cache)
            try DigestFixture.rewriteInPlace(member, with: Data("MEMBER \(round)\n".utf8))
            var times = [written.st_atim, written.st_mtim]
            #expect(utimensat(AT_FDCWD, member.path, &times, 0) == 0)
            let after = try DigestFixture.verify(url, cache: cache)
            #expect(after.verification.mismatchedMembers == ["m00002.txt"], "round \(round)")
        }
    }

    @Test("a file not older than its hashing is not recorded as trusted, and is hashed again")
    func racyFileNotRecorded() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Fresh.test")
        try DigestFixture.makePackage(at: url, count: 3)
        let cache = RecordingDigestCache()
        #expect(try DigestFixture.verify(url, cache: cache).hashed == 3)
        #expect(cache.digests(forPackageAt: url.path).count == 3)

        // Rewritten just now, with its old modification time: its change time is of this tick.
        let member = url.appendingPathComponent("m00001.txt")
        let old = DigestFixture.status(member)
        try DigestFixture.rewriteInPlace(member, with: Data("member 1\n".utf8))
        var times = [old.st_atim, old.st_mtim]
        #expect(utimensat(AT_FDCWD, member.path, &times, 0) == 0)
        let recheck = try DigestFixture.verify(url, cache: cache)
        #expect(recheck.hashed == 1)
        let recorded = cache.digests(forPackageAt: url.path)
        #expect(recorded.count == 2)
        #expect(!recorded.contains { $0.identity.inode == UInt64(old.st_ino) })
        #expect(recorded.allSatisfy { $0.isTrusted })
        // And again: not known, read again.
        #expect(try DigestFixture.verify(url, cache: cache).hashed == 1)
    }

    @Test("a cached digest that disagrees with the manifest is not believed: the member is read")
    func disagreeingDigestRead() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Poisoned.test")
        try DigestFixture.makePackage(at: url, count: 4)
        let cache = RecordingDigestCache()
        _ = try DigestFixture.verify(url, cache: cache)
        let poisoned = cache.digests(forPackageAt: url.path).map {
            CachedMemberDigest(identity: $0.identity, sha256: String(repeating: "0", count: 64), referenceTime: $0.referenceTime)
        }
        cache.record(poisoned, forPackageAt: url.path)
        let result = try DigestFixture.verify(url, cache: cache)
        #expect(result.verification.isComplete)
        #expect(result.hashed == 4)
    }

    @Test("after a save, the next process reads no member the save linked: their new change times are recorded")
    func savedPackageRecorded() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Saved.test")
        try DigestFixture.makePackage(at: url, count: 200)
        let cache = PersistentMemberDigestCache(folderURL: directory.appending("cache"))
        // Opened (and checked) as a document does, then a save of one changed member.
        var tree = try FileWrapper(contentsOf: url)
        var manifest = try DocumentManifest(package: tree, manifestName: DigestFixture.format.manifestName, packagePath: url.path)
        var hasher = MemberHasher(digestCache: cache)
        #expect(try hasher.verify(tree, against: manifest, manifestName: DigestFixture.format.manifestName, packagePath: url.path).isComplete)
        tree["m00000.txt"] = FileWrapper(regularFileWithContents: Data("changed\n".utf8))
        manifest.members = try hasher.memberRecords(
            of: tree, manifestName: DigestFixture.format.manifestName, previous: manifest.members, packagePath: url.path)
        tree[DigestFixture.format.manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        let saved = try tree.write(to: url, options: SaveOptions(durability: .consistent))
        hasher.rememberDigests(of: saved, members: manifest.members ?? [:])
        DigestFixture.waitUntilOld()
        hasher.recordSavedDigests(ofPackageAt: url.path, members: manifest.members ?? [:])

        let next = try DigestFixture.verify(url, cache: PersistentMemberDigestCache(folderURL: directory.appending("cache")))
        #expect(next.verification.isComplete)
        #expect(next.hashed == 0)
    }
}
