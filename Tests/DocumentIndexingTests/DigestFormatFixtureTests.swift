import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The frozen fixture of `Formats/member-digests/v1` is read by today's code.
@Suite("Member digest cache format")
struct DigestFormatFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Formats/member-digests/v1/fixtures")

    @Test("the v1 fixture's records are read: identities, reference times and digests of the three members")
    func readsV1Fixture() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.appending("cache")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.fixtures.appendingPathComponent("member-digests.sqlite"),
            to: folder.appendingPathComponent(PersistentMemberDigestCache.fileName))
        let cache = PersistentMemberDigestCache(folderURL: folder)
        let digests = cache.digests(forPackageAt: "/home/user/Notes/Example.test")
        #expect(cache.notices.isEmpty, "\(cache.notices)")
        #expect(digests.count == 3)
        let expected = try (0..<3).map { index in
            let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("Example.test/m0000\(index).txt"))
            return data.withUnsafeBytes { MemberHasher.sha256(of: $0) }
        }
        #expect(Set(digests.map(\.sha256)) == Set(expected))
        #expect(digests.allSatisfy { $0.identity.size == 9 && $0.identity.changeTime != nil })
        // Recorded as trusted: older than the reading began.
        #expect(digests.allSatisfy { $0.isTrusted })
        #expect(cache.digests(forPackageAt: "/home/user/Notes/Other.test").isEmpty)
    }
}
