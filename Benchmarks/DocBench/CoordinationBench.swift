#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation

/// Uncontended coordinated read and write with no presenters, against the floor: one raw OFD
/// lock + unlock pair on an already open lock file (the cheapest way to exclude another process).
struct CoordinationBench {
    let rounds: Int
    let operationsPerRound = 2_000
    let work: WorkDirectory

    struct Result {
        var floorRead = Samples()
        var floorWrite = Samples()
        var syscallsRead = Samples()
        /// Locks a coordinated read of the item takes.
        var lockCount = 0
        var read = Samples()
        var write = Samples()
    }

    func run() throws -> Result {
        let namespaceURL = URL(fileURLWithPath: work.path).appendingPathComponent("namespace")
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceURL, packageExtensions: ["note"]))
        let item = URL(fileURLWithPath: work.path).appendingPathComponent("library/trip.note/body.md")
        try FileManager.default.createDirectory(at: item.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("body".utf8).write(to: item)
        let lockFile = open(namespaceURL.appendingPathComponent("locks").path, O_RDWR | O_CLOEXEC)
        guard lockFile >= 0 else { throw BenchError(description: "open lock file: errno \(errno)") }
        defer { close(lockFile) }
        // What a read of this item asks of the kernel, bare: a shared lock on the "inside" byte of
        // each of the folders above the package, the package's own byte, one unlock of everything,
        // the stat that revalidates the cached folder and the look for presenters.
        let folderCount = item.deletingLastPathComponent().deletingLastPathComponent().pathComponents.count - 1
        let folderPath = item.deletingLastPathComponent().path
        let presenceEntry = namespaceURL.appendingPathComponent("presenters/4242").path
        var result = Result()
        result.lockCount = folderCount + 1
        progress("docbench coordinate: \(rounds) rounds of \(operationsPerRound) operations per variant")
        for _ in 0..<rounds {
            result.floorRead.append(perOperation { _ = dk_ofd_lock(lockFile, 4242, 1, 1, 1); _ = dk_ofd_lock(lockFile, 4242, 1, 0, 0) })
            result.floorWrite.append(perOperation { _ = dk_ofd_lock(lockFile, 4242, 1, 2, 1); _ = dk_ofd_lock(lockFile, 4242, 1, 0, 0) })
            result.syscallsRead.append(perOperation {
                for folder in 0..<folderCount { _ = dk_ofd_lock(lockFile, Int64(1_000 + 2 * folder + 1), 1, 1, 1) }
                _ = dk_ofd_lock(lockFile, 4242, 1, 1, 1)
                var status = stat()
                _ = stat(folderPath, &status)
                _ = access(presenceEntry, F_OK)
                _ = dk_ofd_lock(lockFile, 0, 0, 0, 0)
            })
            result.read.append(try perOperationThrowing { try coordinator.coordinate(readingItemAt: item) { _ in } })
            result.write.append(try perOperationThrowing { try coordinator.coordinate(writingItemAt: item) { _ in } })
        }
        return result
    }

    private func perOperation(_ body: () -> Void) -> UInt64 {
        let start = now()
        for _ in 0..<operationsPerRound { body() }
        return (now() - start) / UInt64(operationsPerRound)
    }

    private func perOperationThrowing(_ body: () throws -> Void) throws -> UInt64 {
        let start = now()
        for _ in 0..<operationsPerRound { try body() }
        return (now() - start) / UInt64(operationsPerRound)
    }

    func markdown(_ result: Result) -> String {
        var lines = [
            "### Coordination without presenters, uncontended",
            "",
            "\(rounds) rounds of \(operationsPerRound) operations each; a row's figure is the time per operation. The item is `library/trip.note/body.md` (a member of a package, four folders below the work folder).",
            "",
            "| variant | median | p90 |",
            "|---|---|---|",
        ]
        for (name, samples) in [
            ("floor: OFD read lock + unlock (lock file open)", result.floorRead),
            ("floor: OFD write lock + unlock (lock file open)", result.floorWrite),
            ("the same read's system calls, bare (\(result.lockCount) locks + unlock + stat + access)", result.syscallsRead),
            ("`coordinate(readingItemAt:)`, empty accessor", result.read),
            ("`coordinate(writingItemAt:)`, empty accessor", result.write),
        ] {
            lines.append("| \(name) | **\(formatDuration(samples.median))** | \(formatDuration(samples.p90)) |")
        }
        lines.append("")
        lines.append("The floor is one lock; a coordination of a member of a package four folders down takes one lock per folder above the package (so that deleting, moving or replacing a folder waits for what happens inside it) and the package's own, revalidates the cached resolution of its folder with one `stat`, and looks for presenters with one `access`: the third row is those system calls alone, the least this design can cost.")
        lines.append("")
        lines.append("| ratio (medians) | value | goal | |")
        lines.append("|---|---|---|---|")
        for (name, mine, floor) in [("read / floor", result.read, result.floorRead), ("write / floor", result.write, result.floorWrite)] {
            let met = ratio(mine.median, floor.median) <= 5 && mine.median < 20_000
            lines.append("| \(name) | \(formatRatio(mine.median, floor.median)) (\(formatDuration(mine.median))) | ≤ 5× and < 20 µs | \(met ? "met" : "not met") |")
        }
        lines.append("| read / its bare system calls | \(formatRatio(result.read.median, result.syscallsRead.median)) | | |")
        return lines.joined(separator: "\n")
    }
}
