#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

/// What 10,000 presenters cost a process: resident memory, and the time to register them.
struct PresenterMemoryBench {
    let count: Int
    let work: WorkDirectory

    final class Idle: FilePresenter {
        let presentedItemURL: URL?
        init(_ url: URL) { presentedItemURL = url }
    }

    struct Result {
        var residentBefore = 0
        var residentAfter = 0
        var registering: UInt64 = 0
        var unregistering: UInt64 = 0
    }

    /// Resident memory in bytes (`VmRSS` of /proc/self/status).
    static func resident() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }

    func run() throws -> Result {
        let folder = URL(fileURLWithPath: work.path).appendingPathComponent("presented")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 0..<count { try Data().write(to: folder.appendingPathComponent("item-\(index).txt")) }
        let namespace = try CoordinationNamespace(directory: URL(fileURLWithPath: work.path).appendingPathComponent("ns-memory"))
        let presenters = (0..<count).map { Idle(folder.appendingPathComponent("item-\($0).txt")) }
        progress("docbench presenters: registering \(count)")
        var result = Result()
        result.residentBefore = Self.resident()
        let start = now()
        let registrations = presenters.map { namespace.addPresenter($0) }
        result.registering = now() - start
        result.residentAfter = Self.resident()
        let removal = now()
        for registration in registrations { registration.remove() }
        result.unregistering = now() - removal
        return result
    }

    func markdown(_ result: Result) -> String {
        let added = max(0, result.residentAfter - result.residentBefore)
        let megabytes = Double(added) / 1_048_576
        return [
            "### \(count) presenters in one process",
            "",
            "Each presents its own existing file in one folder; the presenter objects exist before the measurement.",
            "",
            "| measure | value | goal | |",
            "|---|---|---|---|",
            "| resident memory added by registering them | \(String(format: "%.1f", megabytes)) MiB | < 10 MB | \(added < 10_000_000 ? "met" : "not met") |",
            "| time to register them | \(formatDuration(result.registering)) (\(formatDuration(result.registering / UInt64(max(count, 1)))) each) | | |",
            "| time to remove them | \(formatDuration(result.unregistering)) | | |",
        ].joined(separator: "\n")
    }
}
