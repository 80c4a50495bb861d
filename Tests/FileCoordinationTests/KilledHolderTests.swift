// A process that dies holding a coordination, even by SIGKILL, releases it at once: the locks
// are the kernel's.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("A killed holder releases its coordination")
struct KilledHolderTests {
    enum Waiter: String, CaseIterable, Sendable {
        /// A second child process, waiting in the blocking API.
        case anotherProcess
        /// This process, with the blocking API and a timeout, on a thread of its own.
        case thisProcessBlocking
        /// This process, with the async API.
        case thisProcessAsync
    }

    @Test("SIGKILL of a process holding a write lets the waiting one in within a second", arguments: Waiter.allCases)
    func killedWriter(waiter: Waiter) async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/text.txt")
        let item = fixture.url("Doc.pkg/text.txt")
        let holder = try fixture.hold("write", item.path, milliseconds: 30_000)
        let holderGranted = await holder.wait(for: "granted", timeout: .seconds(20))
        try #require(holderGranted != nil, "\(holder.errorOutput)")

        // The waiter asks for the package as a whole (the unit of the holder's member).
        let waitedItem = fixture.url("Doc.pkg")
        let granted: () async throws -> UInt64
        switch waiter {
        case .anotherProcess:
            let child = try fixture.hold("read", waitedItem.path, milliseconds: 0)
            try #require(await child.wait(for: "started", timeout: .seconds(20)) != nil)
            granted = {
                let time = await child.wait(for: "granted", timeout: .seconds(10))
                #expect(await child.exitStatus(timeout: .seconds(10)) == 0, "\(child.errorOutput)")
                return try #require(time)
            }
        case .thisProcessBlocking:
            let coordinator = fixture.coordinator
            let task = Task.detached {
                try coordinator.coordinate(readingItemAt: waitedItem, timeout: .seconds(10)) { _ in monotonicNanoseconds() }
            }
            granted = { try await task.value }
        case .thisProcessAsync:
            let coordinator = fixture.coordinator
            let task = Task {
                try await coordinator.coordinate(with: [.readingIntent(with: waitedItem)], timeout: .seconds(10)) { _ in
                    monotonicNanoseconds()
                }
            }
            granted = { try await task.value }
        }
        // The waiter really waits while the holder lives.
        try await Task.sleep(for: .milliseconds(300))
        #expect(holder.time("released") == nil)

        let killed = monotonicNanoseconds()
        holder.killNow()
        let grantedAt = try await granted()
        #expect(grantedAt >= killed, "the waiter was granted before the holder died")
        #expect(grantedAt - min(grantedAt, killed) < 1_000_000_000, "granted \(Int64(grantedAt) - Int64(killed)) ns after SIGKILL")
        #expect(holder.time("released") == nil)
    }

    @Test("After a killed holder the namespace holds one lock file, and it keeps working")
    func namespaceAfterKill() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a")
        for _ in 0..<3 {
            let holder = try fixture.hold("delete", fixture.url("a").path, milliseconds: 30_000)
            try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil)
            holder.killNow()
        }
        let value = try fixture.coordinator.coordinate(writingItemAt: fixture.url("a"), options: .forDeleting, timeout: .seconds(2)) { _ in 7 }
        #expect(value == 7)
        let names = try fixture.namespaceFolder.contents().filter { !$0.hasPrefix("child-") }
        #expect(names == ["locks"])
    }
}
