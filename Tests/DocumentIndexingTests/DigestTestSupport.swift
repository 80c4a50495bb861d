import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Packages with a manifest listing their members, for the digest cache tests.
enum DigestFixture {
    static let format = FormatDescription(identifier: "org.documentkit.digest-test", version: 1)
    static let writer = DocumentManifest.Writer(name: "digest-tests", version: "1.0")

    /// Writes a package of `count` small members (and a manifest listing them) at `url`, then
    /// waits until its files are older than the trust margin of the racy-timestamp rule.
    static func makePackage(at url: URL, count: Int, waitingUntilOld: Bool = true) throws {
        var children: [String: FileWrapper] = [:]
        for index in 0..<count {
            children[String(format: "m%05d.txt", index)] = FileWrapper(regularFileWithContents: Data("member \(index)\n".utf8))
        }
        var tree = FileWrapper(directoryWithFileWrappers: children)
        var manifest = format.makeManifest(writer: writer)
        var hasher = MemberHasher()
        manifest.members = try hasher.memberRecords(of: tree, manifestName: format.manifestName, packagePath: url.path)
        tree[format.manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        try tree.write(to: url, options: SaveOptions(durability: .consistent))
        if waitingUntilOld { waitUntilOld() }
    }

    /// Sleeps past the trust margin, so that files written before count as older than a digest.
    static func waitUntilOld() {
        usleep(UInt32(max(DigestClock.margin(for: FileIdentity(device: 0, inode: 0, size: 0, modificationTime: 1, changeTime: 1)) / 1000 * 3, 50_000)))
    }

    /// Verifies the package at `url` as read now with a new hasher using `cache`: the
    /// verification and how many members were read.
    static func verify(_ url: URL, cache: (any MemberDigestCache)?) throws -> (verification: PackageVerification, hashed: Int) {
        let tree = try FileWrapper(contentsOf: url)
        let manifest = try DocumentManifest(package: tree, manifestName: format.manifestName, packagePath: url.path)
        var hasher = MemberHasher(digestCache: cache)
        let verification = try hasher.verify(tree, against: manifest, manifestName: format.manifestName, packagePath: url.path)
        return (verification, hasher.hashedFileCount)
    }

    /// Rewrites the file at `url` in place (same inode) with `bytes`.
    static func rewriteInPlace(_ url: URL, with bytes: Data) throws {
        let fd = open(url.path, O_WRONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        #expect(written == bytes.count)
    }

    /// The `stat` of the file at `url`.
    static func status(_ url: URL) -> stat {
        var status = stat()
        #expect(stat(url.path, &status) == 0)
        return status
    }
}

/// A digest cache in memory that keeps what it was told, for checking what the hasher records.
final class RecordingDigestCache: MemberDigestCache {
    private let store = Mutex<[String: [CachedMemberDigest]]>([:])

    func digests(forPackageAt packagePath: String) -> [CachedMemberDigest] { store.withLock { $0[packagePath] ?? [] } }

    func record(_ digests: [CachedMemberDigest], forPackageAt packagePath: String) {
        store.withLock { $0[packagePath] = digests }
    }
}
