import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

extension Fixture {
    /// A child process presenting `path` (see `present` in Tests/CoordinationChild).
    func present(_ path: String, _ behaviour: String = "log") async throws -> Child {
        let child = try Child(["present", namespaceFolder.url.path, extensionsArgument, path, behaviour], outputFolder: namespaceFolder.url)
        try #require(await child.wait(for: "ready", timeout: .seconds(20)) != nil, "\(child.errorOutput)")
        return child
    }

    /// A presenter of `relative` in this process, and its registration (remove it when done).
    func presentHere(_ relative: String) -> (RecordingPresenter, PresenterRegistration) {
        let presenter = RecordingPresenter(url(relative))
        return (presenter, namespace.addPresenter(presenter))
    }

    /// What is left in `presenters/` of `child`'s process (entries, socket).
    func presenceLeftovers(of child: Child) throws -> [String] {
        let presenters = namespaceFolder.url.appendingPathComponent("presenters")
        return try FileManager.default.subpathsOfDirectory(atPath: presenters.path).filter { $0.contains("\(child.pid).") }
    }
}

extension Child {
    /// The callback lines so far (without the `ready` line).
    var callbacks: [String] { output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("ready") } }

    /// Waits until the child printed `count` callback lines (up to 10 s); the lines.
    func callbacks(count: Int) async -> [String] {
        let deadline = ContinuousClock.now + .seconds(10)
        while callbacks.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return callbacks
    }

    /// Waits until the child printed `line` (up to 10 s).
    func wait(forLine line: String) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if callbacks.contains(line) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

/// A presenter in the test process that records what it is asked.
final class RecordingPresenter: FilePresenter {
    let presentedItemURL: URL?
    private let log = Mutex<[String]>([])
    init(_ url: URL) { presentedItemURL = url }
    var calls: [String] { log.withLock { $0 } }

    /// Waits until `count` calls were recorded (up to 5 s); the calls.
    func calls(count: Int) async -> [String] {
        let deadline = ContinuousClock.now + .seconds(5)
        while calls.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return calls
    }
    func savePresentedItemChanges() async throws { log.withLock { $0.append("save") } }
    func relinquishPresentedItemToReader() async -> (@Sendable () async -> Void)? {
        log.withLock { $0.append("relinquish-reader") }
        return { self.log.withLock { $0.append("reacquire") } }
    }
    func relinquishPresentedItemToWriter() async -> (@Sendable () async -> Void)? {
        log.withLock { $0.append("relinquish-writer") }
        return { self.log.withLock { $0.append("reacquire") } }
    }
    func accommodatePresentedItemDeletion() async { log.withLock { $0.append("deletion") } }
    /// Records `subitem-deletion NAME present|gone`: whether the subitem was still there.
    func accommodatePresentedSubitemDeletion(at url: URL) async {
        let state = FileManager.default.fileExists(atPath: url.path) ? "present" : "gone"
        log.withLock { $0.append("subitem-deletion \(url.lastPathComponent) \(state)") }
    }
}

@Suite("Coordinators ask presenters in other processes and in this one")
struct PresenterMessagingTests {
    @Test("a read asks another process's presenter to save, then to step aside, and gives the item back after")
    func readAsksToSaveFirst() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt", "old")
        let child = try await fixture.present(fixture.url("note.txt").path, "save=saved by the presenter")
        let read = try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt")) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(read == "saved by the presenter")
        #expect(await child.wait(forLine: "reacquire"))
        #expect(Array(child.callbacks.prefix(3)) == ["save", "relinquish-reader", "reacquire"], "\(child.callbacks)")
    }

    @Test("a read withoutChanges does not ask to save")
    func readWithoutChanges() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in }
        #expect(await child.wait(forLine: "reacquire"))
        #expect(Array(child.callbacks.prefix(2)) == ["relinquish-reader", "reacquire"], "\(child.callbacks)")
    }

    @Test("a delete asks the presenter to step aside and announces the deletion, once")
    func deletionAnnouncedOnce() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        try fixture.coordinator.coordinate(writingItemAt: fixture.url("note.txt"), options: .forDeleting) { url in
            try FileManager.default.removeItem(at: url)
        }
        #expect(await child.wait(forLine: "reacquire"))
        try await Task.sleep(for: .milliseconds(500))  // the watcher sees the deletion too: not again
        #expect(child.callbacks == ["relinquish-writer", "deletion", "reacquire"], "\(child.callbacks)")
    }

    @Test("a presenter that does not answer in time is marked unresponsive and the coordination goes on without it")
    func slowPresenterMissesDeadline() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path, "slow")
        let coordinator = FileCoordinator(namespace: fixture.namespace, presenterTimeout: .milliseconds(300))
        var ran = false
        try coordinator.coordinate(writingItemAt: fixture.url("note.txt")) { _ in ran = true }
        #expect(ran)
        #expect(try fixture.isMarkedUnresponsive(child))
    }

    @Test("two presenters of one item: a coordination from inside a callback fails at once instead of deadlocking")
    func twoPresenterDeadlockEndsInAnError() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/body.md")
        let url = fixture.url("Doc.pkg")
        let mine = fixture.namespace.addPresenter(RecordingPresenter(url))
        defer { mine.remove() }
        let child = try await fixture.present(url.path, "nested")
        let coordinator = FileCoordinator(namespace: fixture.namespace, presenter: mine)
        let started = ContinuousClock.now
        try coordinator.coordinate(writingItemAt: url.appendingPathComponent("body.md")) { _ in }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(await child.wait(forLine: "nested-refused"), "\(child.callbacks)")
        #expect(!child.callbacks.contains("nested-ran"))
    }

    @Test("the presenter of a process that died is skipped, and its entry removed")
    func deadPresenterIsSkipped() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        child.killNow()
        let started = ContinuousClock.now
        try fixture.coordinator.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(try fixture.presenceLeftovers(of: child).isEmpty)
    }

    @Test("presenters in this process are asked too, except the coordinator's own")
    func inProcessPresenters() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let (presenter, registration) = fixture.presentHere("note.txt")
        defer { registration.remove() }
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt")) { _ in }
        #expect(presenter.calls == ["save", "relinquish-reader", "reacquire"])
        let own = FileCoordinator(namespace: fixture.namespace, presenter: registration)
        try own.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(presenter.calls == ["save", "relinquish-reader", "reacquire"])
    }
}
