// A coordination inside another's accessor (same task or thread) runs at once when the outer
// one covers it, takes free locks without waiting otherwise, and fails with `busy` instead of
// waiting: never a hang.

import Dispatch
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@Suite("Nested coordination", .timeLimit(.minutes(1)))
struct NestedCoordinationTests {
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var outer: (access: AccessKind, path: String)
        var inner: (access: AccessKind, path: String)
        /// Whether the inner coordination runs (else it fails with `busy`).
        var runs: Bool
    }

    static let cases: [Case] = [
        Case(description: "read inside a write of the same item", outer: (.write, "f"), inner: (.read, "f"), runs: true),
        Case(description: "write inside a write of the same item", outer: (.write, "f"), inner: (.write, "f"), runs: true),
        Case(description: "read inside a read of the same item", outer: (.read, "f"), inner: (.read, "f"), runs: true),
        Case(description: "write inside a read of the same item", outer: (.read, "f"), inner: (.write, "f"), runs: false),
        Case(description: "delete inside a read of the same item", outer: (.read, "f"), inner: (.delete, "f"), runs: false),
        Case(description: "write of a member inside a write of another member", outer: (.write, "Doc.pkg/a"), inner: (.write, "Doc.pkg/b"), runs: true),
        Case(description: "write of a member inside a read of another member", outer: (.read, "Doc.pkg/a"), inner: (.write, "Doc.pkg/b"), runs: false),
        Case(description: "write of a file inside a delete of its folder", outer: (.delete, "D"), inner: (.write, "D/f"), runs: true),
        Case(description: "delete of a folder inside a write of a file in it", outer: (.write, "D/f"), inner: (.delete, "D"), runs: false),
        Case(description: "write of an unrelated free item inside a read", outer: (.read, "f"), inner: (.write, "g"), runs: true),
        Case(description: "replace of an unrelated free item inside a write", outer: (.write, "f"), inner: (.replace, "D"), runs: true),
    ]

    static func coordinate<T>(_ coordinator: FileCoordinator, _ access: AccessKind, _ url: URL, timeout: Duration? = nil, _ body: () throws -> T) throws -> T {
        switch access {
        case .read: try coordinator.coordinate(readingItemAt: url, timeout: timeout) { _ in try body() }
        case .write: try coordinator.coordinate(writingItemAt: url, timeout: timeout) { _ in try body() }
        case .delete: try coordinator.coordinate(writingItemAt: url, options: .forDeleting, timeout: timeout) { _ in try body() }
        case .move: try coordinator.coordinate(writingItemAt: url, options: .forMoving, timeout: timeout) { _ in try body() }
        case .replace: try coordinator.coordinate(writingItemAt: url, options: .forReplacing, timeout: timeout) { _ in try body() }
        }
    }

    static func makeItems(_ fixture: Fixture) throws {
        for name in ["f", "g", "Doc.pkg/a", "Doc.pkg/b", "D/f"] { try fixture.makeFile(name) }
    }

    @Test("A nested coordination runs at once when covered or free, else fails with busy at once", arguments: cases)
    func nested(_ nestedCase: Case) throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let coordinator = fixture.coordinator
        let started = ContinuousClock.now
        var innerRan = false
        var innerError: (any Error)?
        try Self.coordinate(coordinator, nestedCase.outer.access, fixture.url(nestedCase.outer.path)) {
            do {
                try Self.coordinate(coordinator, nestedCase.inner.access, fixture.url(nestedCase.inner.path)) { innerRan = true }
            } catch {
                innerError = error
            }
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(innerRan == nestedCase.runs)
        if nestedCase.runs {
            #expect(innerError == nil)
        } else {
            #expect(innerError.map(isBusy) == true, "\(String(describing: innerError))")
        }
        // Nothing stays locked: both items can now be written by a fresh coordination without waiting.
        for path in [nestedCase.outer.path, nestedCase.inner.path] {
            try Self.coordinate(coordinator, .delete, fixture.url(path), timeout: .zero) {}
        }
    }

    @Test("A nested coordination of an item another process holds fails with busy at once")
    func nestedWouldWait() async throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let holder = try fixture.hold("write", fixture.url("g").path, milliseconds: 30_000)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        let started = ContinuousClock.now
        #expect(throws: DocumentKitError.self) {
            try fixture.coordinator.coordinate(writingItemAt: fixture.url("f")) { _ in
                do {
                    try fixture.coordinator.coordinate(readingItemAt: fixture.url("g")) { _ in _ = Issue.record("the inner accessor ran") }
                } catch {
                    #expect(isBusy(error), "\(error)")
                    throw error
                }
            }
        }
        #expect(ContinuousClock.now - started < .milliseconds(500))
        holder.release()
    }

    @Test("A coordination inside an accessor of another namespace is not covered by it")
    func otherNamespaceIsNotCovered() async throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let otherFolder = try TemporaryDirectory(prefix: "dk-coord-ns-other")
        let other = FileCoordinator(namespace: try CoordinationNamespace(directory: otherFolder.url, packageExtensions: ["pkg"]))
        let f = fixture.url("f")
        let holder = try Child(["hold", otherFolder.url.path, "pkg", "write", f.path, "30000"], outputFolder: otherFolder.url)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        var innerError: (any Error)?
        try fixture.coordinator.coordinate(writingItemAt: f) { _ in
            do {
                try other.coordinate(readingItemAt: f) { _ in _ = Issue.record("read while another process of that namespace writes") }
            } catch {
                innerError = error
            }
        }
        #expect(innerError.map(isBusy) == true, "\(String(describing: innerError))")
        holder.release()
        #expect(await holder.exitStatus(timeout: .seconds(10)) == 0)
        // Another namespace object on the same folder is the same lock file: covered.
        let same = FileCoordinator(namespace: try CoordinationNamespace(directory: fixture.namespaceFolder.url, packageExtensions: ["pkg"]))
        let ran = try fixture.coordinator.coordinate(writingItemAt: f) { _ in try same.coordinate(writingItemAt: f) { _ in true } }
        #expect(ran)
    }

    @Test("A task started inside an accessor that coordinates after the accessor returned waits like any other")
    func taskOutlivingTheAccessor() async throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let coordinator = fixture.coordinator
        let f = fixture.url("f")
        let (outerEnded, outerEndedContinuation) = AsyncStream.makeStream(of: Void.self)
        // The task inherits the accessor's task-local state, but not its locks.
        let late = try coordinator.coordinate(writingItemAt: f) { _ in
            Task {
                for await _ in outerEnded { break }
                return try await coordinator.coordinate(with: [.writingIntent(with: f)], timeout: .milliseconds(300)) { _ in
                    monotonicNanoseconds()
                }
            }
        }
        let holder = try fixture.hold("write", f.path, milliseconds: 30_000)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        outerEndedContinuation.yield()
        let result = await late.result
        #expect(throws: DocumentKitError.self, "it ran while another process held the item") { try result.get() }
        holder.release()
    }

    @Test("In the async form, a covered nested coordination runs and an uncovered one fails with busy")
    func nestedAsync() async throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let coordinator = fixture.coordinator
        let f = fixture.url("f")
        let results = try await coordinator.coordinate(with: [.readingIntent(with: f)]) { _ in
            let read = try await coordinator.coordinate(with: [.readingIntent(with: f)]) { _ in "ran" }
            var write = "ran"
            do {
                write = try await coordinator.coordinate(with: [.writingIntent(with: f)]) { _ in "ran" }
            } catch {
                write = isBusy(error) ? "busy" : "\(error)"
            }
            return [read, write]
        }
        #expect(results == ["ran", "busy"])
    }

    @Test("prepare coordinates its items once; coordinations of them inside run without waiting")
    func prepareCoversItsItems() throws {
        let fixture = try Fixture()
        try Self.makeItems(fixture)
        let coordinator = fixture.coordinator
        let (f, g, folder) = (fixture.url("f"), fixture.url("g"), fixture.url("D"))
        var ran: [String] = []
        var writeOfReadItem: (any Error)?
        var outsiderBlocked = false
        try coordinator.prepare(forReadingItemsAt: [f], options: [], writingItemsAt: [g, folder], options: .forDeleting, timeout: .seconds(5)) {
            let started = ContinuousClock.now
            try coordinator.coordinate(readingItemAt: f) { _ in ran.append("read f") }
            try coordinator.coordinate(writingItemAt: g) { _ in ran.append("write g") }
            try coordinator.coordinate(readingItemAt: g) { _ in ran.append("read g") }
            try coordinator.coordinate(writingItemAt: folder, options: .forDeleting) { _ in ran.append("delete D") }
            try coordinator.coordinate(writingItemAt: fixture.url("D/f")) { _ in ran.append("write D/f") }
            #expect(ContinuousClock.now - started < .milliseconds(500))
            do { try coordinator.coordinate(writingItemAt: f) { _ in ran.append("write f") } } catch { writeOfReadItem = error }
            // Outside this thread's coordination (a dispatch queue inherits no task-local
            // state), writing g must wait for the prepared batch.
            let done = DispatchSemaphore(value: 0)
            let blocked = Mutex(false)
            DispatchQueue.global().async {
                do { try coordinator.coordinate(writingItemAt: g, timeout: .milliseconds(200)) { _ in } } catch {
                    blocked.withLock { $0 = isBusy(error) }
                }
                done.signal()
            }
            done.wait()
            outsiderBlocked = blocked.withLock { $0 }
        }
        #expect(ran == ["read f", "write g", "read g", "delete D", "write D/f"])
        #expect(writeOfReadItem.map(isBusy) == true, "a write of an item prepared for reading needs more than the batch holds")
        #expect(outsiderBlocked)
        // The batch released everything.
        try coordinator.coordinate(writingItemAt: g, options: .forReplacing, timeout: .zero) { _ in }
        try coordinator.coordinate(writingItemAt: folder, options: .forDeleting, timeout: .zero) { _ in }
    }
}
