// The two-item forms hold both items for the whole accessor, and two of them taking the same
// items in opposite orders never deadlock (locks are taken in one global order).

import Dispatch
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@Suite("Two items in one coordination", .timeLimit(.minutes(1)))
struct TwoItemCoordinationTests {
    final class Counts: Sendable {
        let inside = Atomic(0)
        let overlaps = Atomic(0)
    }

    /// Whether a coordination from outside this thread's coordinations (a dispatch queue
    /// inherits no task-local state) is granted within 100 ms.
    static func grantedElsewhere(_ body: @escaping @Sendable () throws -> Void) -> Bool {
        let granted = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            if (try? body()) != nil { granted.withLock { $0 = true } }
            done.signal()
        }
        done.wait()
        return granted.withLock { $0 }
    }

    @Test("Reading one item and writing another holds both: a reader shares the first, nobody gets the second")
    func readAndWrite() throws {
        let fixture = try Fixture()
        try fixture.makeFile("a")
        try fixture.makeFile("b")
        let coordinator = fixture.coordinator
        let (a, b) = (fixture.url("a"), fixture.url("b"))
        let wait = Duration.milliseconds(100)
        let seen = try coordinator.coordinate(readingItemAt: a, writingItemAt: b) { readURL, writeURL in
            [
                Self.grantedElsewhere { try coordinator.coordinate(readingItemAt: a, timeout: wait) { _ in } },
                Self.grantedElsewhere { try coordinator.coordinate(writingItemAt: a, timeout: wait) { _ in } },
                Self.grantedElsewhere { try coordinator.coordinate(readingItemAt: b, timeout: wait) { _ in } },
                readURL == a && writeURL == b,
            ]
        }
        #expect(seen == [true, false, false, true])
    }

    @Test("A move (forMoving the source, forReplacing the destination folder) holds both subtrees")
    func move() throws {
        let fixture = try Fixture()
        try fixture.makeFile("from/note.txt")
        try fixture.makeFolder("to")
        let coordinator = fixture.coordinator
        let (from, to) = (fixture.url("from"), fixture.url("to"))
        let wait = Duration.milliseconds(100)
        let seen = try coordinator.coordinate(writingItemAt: from, options: .forMoving, writingItemAt: to, options: .forReplacing) { source, destination in
            try FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: source, to: destination)
            return [
                Self.grantedElsewhere { try coordinator.coordinate(readingItemAt: fixture.url("from/note.txt"), timeout: wait) { _ in } },
                Self.grantedElsewhere { try coordinator.coordinate(writingItemAt: fixture.url("to/note.txt"), timeout: wait) { _ in } },
                Self.grantedElsewhere { try coordinator.coordinate(writingItemAt: fixture.url("elsewhere"), timeout: wait) { _ in } },
            ]
        }
        #expect(seen == [false, false, true])
        #expect(FileManager.default.fileExists(atPath: fixture.url("to/note.txt").path))
    }

    @Test("Writers of (a, b) and (b, a) on two threads, 200 times each, never deadlock")
    func oppositeOrders() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a", "0")
        try fixture.makeFile("b", "0")
        let coordinator = fixture.coordinator
        let (a, b) = (fixture.url("a"), fixture.url("b"))
        let counts = Counts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (first, second) in [(a, b), (b, a)] {
                group.addTask {
                    for _ in 0..<200 {
                        try coordinator.coordinate(writingItemAt: first, writingItemAt: second, timeout: .seconds(10)) { _, _ in
                            if counts.inside.add(1, ordering: .relaxed).newValue > 1 { counts.overlaps.add(1, ordering: .relaxed) }
                            counts.inside.subtract(1, ordering: .relaxed)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let overlapCount = counts.overlaps.load(ordering: .relaxed)
        #expect(overlapCount == 0)
    }
}
