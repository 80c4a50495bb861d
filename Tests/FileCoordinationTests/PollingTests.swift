import DocumentKit
import DocumentKitTesting
@testable import FileCoordination
import Foundation
import Testing

@Suite("Polling: forced, and on file systems inotify is blind to")
struct PollingTests {
    @Test("with forced polling (no inotify at all), echo >, mv and rm reach a presenter once each")
    func forcedPollingFile() async throws {
        let fixture = try Fixture(watchOptions: WatchOptions(pollInterval: .milliseconds(50), forcePolling: true))
        try fixture.makeFile("doc.txt", "1\n")
        let (_, events) = try await fixture.presented("doc.txt")
        #expect(fixture.namespace.presenters.watches.watcher == nil, "no inotify instance")
        try await expectEchoMoveAndRemove(fixture, events)
    }

    @Test("with forced polling, a presented folder hears changes at any depth once each")
    func forcedPollingFolder() async throws {
        let fixture = try Fixture(watchOptions: WatchOptions(pollInterval: .milliseconds(50), forcePolling: true))
        try await expectFileLifecycle(in: fixture)
    }

    @Test("on a remote file system (NFS, faked) folders are watched and polled, and each change still arrives once")
    func watchedAndPolled() async throws {
        let fixture = try Fixture(watchOptions: WatchOptions(pollInterval: .milliseconds(20), forcePolling: false))
        fixture.namespace.presenters.watches.hooks.remoteFileSystem = { _ in "nfs" }
        try fixture.makeFile("doc.txt", "1\n")
        let (_, events) = try await fixture.presented("doc.txt")
        #expect(fixture.namespace.presenters.watches.watcher != nil)
        #expect(fixture.namespace.presenters.watches.isPolled(fixture.items.url.resolvingSymlinksInPath().path))
        try await expectEchoMoveAndRemove(fixture, events)
    }

    @Test("network, cluster and FUSE file systems are recognised by their statfs magic; a local disk is not")
    func remoteMagicNumbers() throws {
        #expect(RemoteFileSystems.magicNumbers[0x6969] == "nfs")
        #expect(RemoteFileSystems.magicNumbers[0xFF53_4D42] == "cifs")
        #expect(RemoteFileSystems.magicNumbers[0xFE53_4D42] == "smb2")
        #expect(RemoteFileSystems.magicNumbers[0x6573_5546] == "fuse")
        #expect(RemoteFileSystems.magicNumbers[0x0102_1997] == "9p")
        #expect(RemoteFileSystems.magicNumbers[0xEF53] == nil, "ext4 is local")
        let fixture = try Fixture()
        #expect(RemoteFileSystems.name(at: fixture.items.url.path) == nil)
    }

    @Test("DOCUMENTKIT_FORCE_POLLING=1 turns polling on by default")
    func environmentForcesPolling() {
        #expect(WatchOptions().forcePolling == (ProcessInfo.processInfo.environment["DOCUMENTKIT_FORCE_POLLING"] == "1"))
        #expect(WatchOptions().pollInterval == .seconds(1))
    }
}
