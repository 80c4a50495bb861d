import DocumentKit
import DocumentKitTesting
@testable import FileCoordination
import Foundation
import Testing

@Suite("After an inotify queue overflow, presenters hear exactly what changed")
struct WatchOverflowTests {
    /// The kernel's per-instance event queue length (`fs.inotify.max_queued_events`).
    static let queueLength = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384

    @Test("a real overflow (reader paused, the queue flooded): one rescan, each change once, nothing for the untouched")
    func realOverflow() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("D/keep.txt", "1\n")
        try fixture.makeFile("D/old.txt")
        try fixture.makeFile("D/sub/inner.txt")
        try fixture.makeFile("flood/anchor.txt")
        let (_, anchorEvents) = try await fixture.presented("flood/anchor.txt")
        let (folder, folderEvents) = try await fixture.presented("D")
        let watcher = try #require(fixture.namespace.presenters.watches.watcher)

        watcher.pause()
        // More events than the queue holds, in a folder watched for another presenter...
        try shell("cd '\(fixture.url("flood").path)' && seq -f 'f%.0f' 1 \(Self.queueLength + 500) | xargs touch")
        // ...then what the presenter of D must hear about, lost in the overflow.
        try shell("""
            cd '\(folder.path)' && echo 2 >> keep.txt && rm old.txt && mv sub/inner.txt sub/renamed.txt \
            && mkdir new && echo x > new/f.txt
            """)
        watcher.resume()

        _ = await folderEvents.wait(for: 5)
        let heard = await folderEvents.settled()
        #expect(watcher.overflowCount >= 1, "the kernel's queue overflowed")
        #expect(heard == [
            .subitemMoved(from: folder.appendingPathComponent("sub/inner.txt"), to: folder.appendingPathComponent("sub/renamed.txt")),
            .subitemChanged(folder.appendingPathComponent("keep.txt")),
            .subitemDeleted(folder.appendingPathComponent("old.txt")),
            .subitemAppeared(folder.appendingPathComponent("new", isDirectory: true)),
            .subitemAppeared(folder.appendingPathComponent("new/f.txt")),
        ], "\(heard)")
        #expect(await anchorEvents.settled(after: .zero).isEmpty)

        // Watching goes on, in the folder that appeared during the overflow too.
        let after = try await folderEvents.heard(after: [("echo y >> '\(folder.path)/new/f.txt'", 6)])
        #expect(after.dropFirst(5) == [.subitemChanged(folder.appendingPathComponent("new/f.txt"))], "\(after)")
    }

    @Test("an overflow with nothing changed is silent")
    func overflowWithoutChanges() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("D/a/file.txt")
        try fixture.makeFile("doc.txt")
        let (_, folderEvents) = try await fixture.presented("D")
        let (_, fileEvents) = try await fixture.presented("doc.txt")
        fixture.namespace.presenters.handle([], overflowed: true, read: nil)
        #expect(await folderEvents.settled().isEmpty)
        #expect(await fileEvents.settled(after: .zero).isEmpty)
    }
}
