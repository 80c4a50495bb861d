#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation

/// A coordinated read that must ask a presenter in another process, against the floor: one
/// 64-byte request and reply over an `AF_UNIX` `SOCK_SEQPACKET` connection between two processes.
struct RoundTripBench {
    let rounds: Int
    let work: WorkDirectory
    let operationsPerRound = 200

    struct Result {
        var floor = Samples()
        /// The floor with a coordination's other work between round trips (a diagnostic).
        var spacedFloor = Samples()
        var withoutPresenter = Samples()
        var withPresenter = Samples()
    }

    /// `docbench --echo-server SOCKET`: answers every packet with the same bytes.
    static func echoServer(_ path: String) -> Never {
        let listener = dk_unix_listen(path)
        guard listener >= 0 else { exit(71) }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let connection = accept(listener, nil, nil)
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { exit(0) }
            _ = send(connection, buffer, count, Int32(MSG_NOSIGNAL))
        }
    }

    /// `docbench --presenter NAMESPACE FILE`: presents FILE (doing nothing when asked) until stdin closes.
    static func presenterProcess(namespace: String, file: String) -> Never {
        final class Idle: FilePresenter {
            let presentedItemURL: URL?
            init(_ url: URL) { presentedItemURL = url }
        }
        guard let space = try? CoordinationNamespace(directory: URL(fileURLWithPath: namespace)) else { exit(71) }
        let registration = space.addPresenter(Idle(URL(fileURLWithPath: file)))
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var byte: UInt8 = 0
        while read(0, &byte, 1) < 0 && errno == EINTR {}
        registration.remove()
        exit(0)
    }

    func run() throws -> Result {
        var result = Result()
        let socketPath = work.path + "/echo.sock"
        let echo = try spawnSelf(["--echo-server", socketPath])
        defer { echo.terminate() }
        let connection = dk_unix_connect(socketPath)
        guard connection >= 0 else { throw BenchError(description: "connect: errno \(errno)") }
        defer { close(connection) }
        let namespaceURL = URL(fileURLWithPath: work.path).appendingPathComponent("rt-namespace")
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceURL))
        let file = URL(fileURLWithPath: work.path).appendingPathComponent("presented.txt")
        try Data("x".utf8).write(to: file)
        let other = URL(fileURLWithPath: work.path).appendingPathComponent("unpresented.txt")
        try Data("x".utf8).write(to: other)
        let presenter = try spawnSelf(["--presenter", namespaceURL.path, file.path])
        defer { presenter.terminate() }
        progress("docbench roundtrip: \(rounds) rounds of \(operationsPerRound) operations per variant")
        var request = [UInt8](repeating: 7, count: 64)
        var reply = [UInt8](repeating: 0, count: 64)
        for _ in 0..<rounds {
            let start = now()
            for _ in 0..<operationsPerRound {
                _ = send(connection, &request, 64, Int32(MSG_NOSIGNAL))
                _ = recv(connection, &reply, 64, 0)
            }
            result.floor.append((now() - start) / UInt64(operationsPerRound))
            result.withoutPresenter.append(try timed { try coordinator.coordinate(readingItemAt: other, options: .withoutChanges) { _ in } })
            result.withPresenter.append(try timed { try coordinator.coordinate(readingItemAt: file, options: .withoutChanges) { _ in } })
            let gap = result.withoutPresenter.median
            let work = try timed { Self.busy(gap) }
            let spaced = try timed {
                _ = send(connection, &request, 64, Int32(MSG_NOSIGNAL))
                _ = recv(connection, &reply, 64, 0)
                Self.busy(gap)
            }
            result.spacedFloor.append(spaced > work ? spaced - work : 0)
        }
        return result
    }

    /// Keeps the CPU busy for `nanoseconds`, as a coordination's own work would.
    private static func busy(_ nanoseconds: UInt64) {
        let end = now() + nanoseconds
        while now() < end {}
    }

    private func timed(_ body: () throws -> Void) throws -> UInt64 {
        let start = now()
        for _ in 0..<operationsPerRound { try body() }
        return (now() - start) / UInt64(operationsPerRound)
    }

    private func spawnSelf(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = Pipe()
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else { throw BenchError(description: "child did not start") }
        return process
    }

    func markdown(_ result: Result) -> String {
        let presenterCost = result.withPresenter.median > result.withoutPresenter.median
            ? result.withPresenter.median - result.withoutPresenter.median : 0
        return [
            "### A coordinated read that asks a presenter in another process",
            "",
            "\(rounds) rounds of \(operationsPerRound) operations per variant; figures are per operation. Reads use `withoutChanges` (relinquish only, no save).",
            "",
            "| variant | median | p90 |",
            "|---|---|---|",
            "| floor: 64 B request + reply, AF_UNIX SEQPACKET, connection open | **\(formatDuration(result.floor.median))** | \(formatDuration(result.floor.p90)) |",
            "| the same round trip with a coordination's own work (busy CPU, as long as a read nobody presents) between round trips, that work not counted | **\(formatDuration(result.spacedFloor.median))** | \(formatDuration(result.spacedFloor.p90)) |",
            "| coordinated read, nobody presents the item | **\(formatDuration(result.withoutPresenter.median))** | \(formatDuration(result.withoutPresenter.p90)) |",
            "| coordinated read, a presenter in another process | **\(formatDuration(result.withPresenter.median))** | \(formatDuration(result.withPresenter.p90)) |",
            "",
            "| measure | value | goal | |",
            "|---|---|---|---|",
            "| presenter's share (with − without) / floor | \(formatRatio(presenterCost, result.floor.median)) (\(formatDuration(presenterCost))) | ≤ 3× | \(ratio(presenterCost, result.floor.median) <= 3 ? "met" : "not met") |",
            "| presenter's share / the spaced round trip (diagnostic) | \(formatRatio(presenterCost, result.spacedFloor.median)) | — | |",
        ].joined(separator: "\n")
    }
}
