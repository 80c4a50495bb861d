import DocumentKit
import DocumentKitTesting
@testable import FileCoordination
import Foundation
import Logging
import Synchronization
import SystemPackage
import Testing

/// A log handler that keeps what is logged.
struct CapturedLog: LogHandler {
    final class Lines: Sendable {
        let lines = Mutex<[(Logger.Level, String, Logger.Metadata)]>([])
    }

    let storage = Lines()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        storage.lines.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
    }

    var logger: Logger { Logger(label: "test") { _ in self } }
    var warnings: [String] { storage.lines.withLock { $0.filter { $0.0 == .warning }.map(\.1) } }
}

@Suite("When inotify cannot watch, presenters are polled, with one warning")
struct WatchLimitTests {
    @Test("out of inotify watches (ENOSPC): one warning naming the folder and sysctl; those folders are polled")
    func outOfWatches() async throws {
        let fixture = try Fixture(watchOptions: WatchOptions(pollInterval: .milliseconds(50), forcePolling: false))
        try fixture.makeFile("D/watched/a.txt")
        try fixture.makeFile("D/unwatched/b.txt")
        try fixture.makeFile("D/unwatched/deeper/c.txt")
        let log = CapturedLog()
        fixture.namespace.presenters.watches.hooks.logger = log.logger
        fixture.namespace.presenters.watches.hooks.faults.addWatch = { path in path.contains("/D/unwatched") ? .noSpace : nil }
        let (folder, events) = try await fixture.presented("D")
        let unwatched = folder.appendingPathComponent("unwatched").path
        #expect(fixture.namespace.presenters.watches.isPolled(unwatched))
        #expect(fixture.namespace.presenters.watches.isPolled(unwatched + "/deeper"))
        #expect(!fixture.namespace.presenters.watches.isPolled(folder.appendingPathComponent("watched").path))

        let heard = try await events.heard(after: [
            ("echo x >> '\(unwatched)/deeper/c.txt'", 1), ("mv '\(unwatched)/b.txt' '\(unwatched)/renamed.txt'", 2),
            ("echo y >> '\(folder.path)/watched/a.txt'", 3),
        ])
        #expect(heard == [
            .subitemChanged(folder.appendingPathComponent("unwatched/deeper/c.txt")),
            .subitemMoved(from: folder.appendingPathComponent("unwatched/b.txt"), to: folder.appendingPathComponent("unwatched/renamed.txt")),
            .subitemChanged(folder.appendingPathComponent("watched/a.txt")),
        ], "\(heard)")
        #expect(log.warnings.count == 1, "\(log.warnings)")
        let warning = try #require(log.warnings.first)
        #expect(warning.contains(unwatched) && warning.contains("fs.inotify.max_user_watches"), "\(warning)")
    }

    @Test("inotify cannot start (EMFILE): one warning naming the sysctl; echo, mv and rm still arrive once each")
    func inotifyCannotStart() async throws {
        let fixture = try Fixture(watchOptions: WatchOptions(pollInterval: .milliseconds(50), forcePolling: false))
        try fixture.makeFile("doc.txt", "1\n")
        try fixture.makeFile("other.txt", "1\n")
        let log = CapturedLog()
        fixture.namespace.presenters.watches.hooks.logger = log.logger
        fixture.namespace.presenters.watches.hooks.faults.initialization = .tooManyOpenFiles
        let (_, events) = try await fixture.presented("doc.txt")
        let (_, otherEvents) = try await fixture.presented("other.txt")
        #expect(fixture.namespace.presenters.watches.watcher == nil)
        try await expectEchoMoveAndRemove(fixture, events)
        #expect(await otherEvents.settled(after: .zero).isEmpty)
        #expect(log.warnings.count == 1, "\(log.warnings)")
        let warning = try #require(log.warnings.first)
        #expect(warning.contains("fs.inotify.max_user_instances") && warning.contains(fixture.items.url.path), "\(warning)")
    }
}
