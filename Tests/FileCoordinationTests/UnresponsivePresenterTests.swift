#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

extension Fixture {
    /// Whether `child`'s process is marked unresponsive in the namespace.
    func isMarkedUnresponsive(_ child: Child) throws -> Bool {
        try presenceLeftovers(of: child).contains { $0.hasSuffix(".unresponsive") }
    }
}

/// A presenting process stopped with `SIGSTOP` (or too slow) must not lock everyone out.
@Suite("A presenter that misses its deadline is skipped until it answers again")
struct UnresponsivePresenterTests {
    @Test("a stopped presenter is skipped by writers and readers, and hears of the change, without acting on stale requests, when it runs again")
    func stoppedPresenterIsSkippedThenTold() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt", "old")
        let child = try await fixture.present(fixture.url("note.txt").path)
        kill(child.pid, SIGSTOP)
        defer { kill(child.pid, SIGCONT) }
        // The first coordinator waits its deadline once, then goes on without the stopped process.
        let first = FileCoordinator(namespace: fixture.namespace, presenterTimeout: .milliseconds(300))
        var wrote = false
        try first.coordinate(writingItemAt: fixture.url("note.txt")) { _ in wrote = true }
        #expect(wrote)
        #expect(try fixture.isMarkedUnresponsive(child))
        // Later coordinators skip it at once: with a 60 s deadline, a wait would be plain to see.
        let patient = FileCoordinator(namespace: fixture.namespace, presenterTimeout: .seconds(60))
        let started = ContinuousClock.now
        let read = try patient.coordinate(readingItemAt: fixture.url("note.txt")) { try String(contentsOf: $0, encoding: .utf8) }
        try patient.coordinate(writingItemAt: fixture.url("note.txt"), options: .forMerging) { _ in }
        #expect(read == "old")
        #expect(ContinuousClock.now - started < .seconds(30), "a later coordinator waited for the stopped presenter")
        // Nothing was changed on disk: the watcher has nothing to say; the notice comes from the missed request.
        kill(child.pid, SIGCONT)
        #expect(await child.wait(forLine: "changed"), "\(child.callbacks)")
        #expect(!child.callbacks.contains { $0.hasPrefix("relinquish") }, "a request given up on was acted on: \(child.callbacks)")
        #expect(try !fixture.isMarkedUnresponsive(child))
        // It answers again: the next coordination asks it.
        try patient.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(await child.wait(forLine: "relinquish-writer"), "\(child.callbacks)")
    }

    @Test("a marked presenter whose process died is skipped, and its entry, socket and mark are removed")
    func markedPresenterThatDiedIsRemoved() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        kill(child.pid, SIGSTOP)
        let coordinator = FileCoordinator(namespace: fixture.namespace, presenterTimeout: .milliseconds(300))
        try coordinator.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(try fixture.isMarkedUnresponsive(child))
        child.killNow()
        try coordinator.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(try fixture.presenceLeftovers(of: child).isEmpty)
    }
}
