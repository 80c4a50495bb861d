// The async form: cancellation and timeouts end a wait without running the accessor; the
// accessor gets the resolved URLs and learns whether the item was deleted while it waited.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@Suite("The async form", .timeLimit(.minutes(1)))
struct AsyncCoordinationTests {
    @Test("Cancelling a waiting coordination throws CancellationError promptly and runs no accessor")
    func cancellationWhileWaiting() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("f")
        let f = fixture.url("f")
        let holder = try fixture.hold("write", f.path, milliseconds: 30_000)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        let ran = Atomic(false)
        let coordinator = fixture.coordinator
        let task = Task {
            try await coordinator.coordinate(with: [.writingIntent(with: f)]) { _ in ran.store(true, ordering: .relaxed) }
        }
        try await Task.sleep(for: .milliseconds(200))
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelled < .milliseconds(500))
        #expect(throws: CancellationError.self) { try result.get() }
        let accessorRan = ran.load(ordering: .relaxed)
        #expect(!accessorRan)
        // The cancelled wait left nothing locked behind.
        holder.release()
        #expect(await holder.exitStatus(timeout: .seconds(10)) == 0)
        try await coordinator.coordinate(with: [.writingIntent(with: f, options: .forDeleting)], timeout: .seconds(2)) { _ in }
    }

    @Test("A task cancelled before it coordinates runs no accessor, even for a free item")
    func cancelledBeforehand() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("f")
        let coordinator = fixture.coordinator
        let f = fixture.url("f")
        let ran = Atomic(false)
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await coordinator.coordinate(with: [.readingIntent(with: f)]) { _ in ran.store(true, ordering: .relaxed) }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let accessorRan = ran.load(ordering: .relaxed)
        #expect(!accessorRan)
        try await coordinator.coordinate(with: [.writingIntent(with: f)], timeout: .zero) { _ in }
    }

    @Test("A wait longer than the timeout throws busy and runs no accessor")
    func timeout() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/a")
        let holder = try fixture.hold("read", fixture.url("Doc.pkg/a").path, milliseconds: 30_000)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        let started = ContinuousClock.now
        await #expect(throws: DocumentKitError.self) {
            do {
                try await fixture.coordinator.coordinate(with: [.writingIntent(with: fixture.url("Doc.pkg/b"))], timeout: .milliseconds(250)) { _ in
                    _ = Issue.record("the accessor ran")
                }
            } catch {
                #expect(isBusy(error), "\(error)")
                throw error
            }
        }
        let waited = ContinuousClock.now - started
        // The holder keeps its lock for 30 s: ending well before that means the timeout ended the
        // wait. (The upper bound is loose because the whole suite shares two cores, and a busy
        // cooperative pool delays the task's wake-ups.)
        #expect(waited >= .milliseconds(250) && waited < .seconds(15), "\(waited)")
        // Reading shares with the holder: no wait, no timeout.
        try await fixture.coordinator.coordinate(with: [.readingIntent(with: fixture.url("Doc.pkg/b"))], timeout: .milliseconds(250)) { _ in }
        holder.release()
    }

    @Test("The accessor gets the resolved URLs of its intents, in order")
    func resolvedURLs() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("real/doc.txt")
        try fixture.makeFolder("real/inner")
        try FileManager.default.createSymbolicLink(atPath: fixture.url("link").path, withDestinationPath: "real")
        let base = fixture.items.url.path
        let intents: [FileAccessIntent] = [
            .readingIntent(with: URL(fileURLWithPath: base + "/link/doc.txt")),
            .writingIntent(with: URL(fileURLWithPath: base + "//real/./inner/../new.txt"), options: .forReplacing),
            .readingIntent(with: URL(fileURLWithPath: base + "/real/inner/")),
        ]
        let seen = try await fixture.coordinator.coordinate(with: intents) { granted in
            granted.map { ($0.url.path, $0.isWriting, $0.itemWasDeletedWhileWaiting) }
        }
        #expect(seen.map(\.0) == ["real/doc.txt", "real/new.txt", "real/inner"].map { fixture.url($0).path })
        #expect(seen.map(\.1) == [false, true, false])
        #expect(seen.map(\.2) == [false, false, false])
        #expect(intents[0].url.path == base + "/link/doc.txt", "the caller's intents are not changed")
    }

    @Test("itemWasDeletedWhileWaiting tells that another process deleted the item while we waited")
    func deletedWhileWaiting() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/text.txt")
        try fixture.makeFile("kept")
        let package = fixture.url("Doc.pkg")
        let deleter = try fixture.hold("delete", package.path, milliseconds: 30_000, action: "remove")
        try #require(await deleter.wait(for: "granted", timeout: .seconds(20)) != nil, "\(deleter.errorOutput)")
        let coordinator = fixture.coordinator
        let waiting = Task {
            try await coordinator.coordinate(
                with: [.readingIntent(with: package.appendingPathComponent("text.txt")), .writingIntent(with: fixture.url("kept"))],
                timeout: .seconds(10)
            ) { granted in
                (granted.map(\.itemWasDeletedWhileWaiting), FileManager.default.fileExists(atPath: package.path))
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        deleter.release()
        let (deleted, exists) = try await waiting.value
        #expect(await deleter.exitStatus(timeout: .seconds(10)) == 0, "\(deleter.errorOutput)")
        #expect(deleted == [true, false])
        #expect(!exists, "nothing the coordinator does re-creates a deleted item")
    }

    @Test("An item that did not exist when the coordination started was not deleted while waiting")
    func missingItemIsNotDeleted() async throws {
        let fixture = try Fixture()
        let flags = try await fixture.coordinator.coordinate(with: [.writingIntent(with: fixture.url("new/item"), options: .forReplacing)]) {
            $0.map(\.itemWasDeletedWhileWaiting)
        }
        #expect(flags == [false])
        #expect(!FileManager.default.fileExists(atPath: fixture.url("new").path))
    }
}
