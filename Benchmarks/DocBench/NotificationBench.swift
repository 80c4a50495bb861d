#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation
import Synchronization

/// How soon a presenter hears of an uncoordinated write, against the floor: the raw inotify event
/// (`IN_CLOSE_WRITE` read by a thread blocked in `read`).
struct NotificationBench {
    let rounds: Int
    let work: WorkDirectory

    struct Result {
        var raw = Samples()
        var presenter = Samples()
    }

    /// A presenter that records when it heard of a change.
    final class TimingPresenter: FilePresenter {
        let presentedItemURL: URL?
        let heard = Mutex<UInt64?>(nil)
        init(_ url: URL) { presentedItemURL = url }
        func presentedItemDidChange() async { heard.withLock { $0 = now() } }
    }

    func run() throws -> Result {
        let folder = URL(fileURLWithPath: work.path).appendingPathComponent("notify")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("watched.txt")
        try Data("0".utf8).write(to: file)
        var result = Result()
        progress("docbench notify: \(rounds) writes per variant")

        // Floor: a thread blocked on a raw inotify descriptor watching the folder.
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0, inotify_add_watch(inotify, folder.path, UInt32(IN_CLOSE_WRITE)) >= 0 else {
            throw BenchError(description: "inotify: errno \(errno)")
        }
        let rawHeard = Mutex<UInt64?>(nil)
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(inotify, &buffer, buffer.count) > 0 { rawHeard.withLock { $0 = now() } }
        }
        reader.start()
        for round in 0..<rounds {
            rawHeard.withLock { $0 = nil }
            let wrote = try writeFile(file.path, round)
            result.raw.append(try waitFor(rawHeard, since: wrote))
            usleep(2_000)
        }
        close(inotify)

        // DocumentKit: a registered presenter's presentedItemDidChange.
        let namespace = try CoordinationNamespace(directory: URL(fileURLWithPath: work.path).appendingPathComponent("namespace"))
        let presenter = TimingPresenter(file)
        let registration = namespace.addPresenter(presenter)
        defer { registration.remove() }
        usleep(50_000)
        for round in 0..<rounds {
            presenter.heard.withLock { $0 = nil }
            let wrote = try writeFile(file.path, rounds + round)
            result.presenter.append(try waitFor(presenter.heard, since: wrote))
            usleep(2_000)
        }
        return result
    }

    /// Rewrites the file in place (open, write, close) and returns the time right before `close`
    /// (which raises the event: a watcher may see it before `close` returns).
    private func writeFile(_ path: String, _ value: Int) throws -> UInt64 {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError(description: "open: errno \(errno)") }
        let bytes = Array("\(value)\n".utf8)
        _ = write(fd, bytes, bytes.count)
        let closing = now()
        close(fd)
        return closing
    }

    private func waitFor(_ heard: borrowing Mutex<UInt64?>, since start: UInt64) throws -> UInt64 {
        let deadline = start + 5_000_000_000
        while now() < deadline {
            if let time = heard.withLock({ $0 }) { return time > start ? time - start : 0 }
            usleep(20)
        }
        throw BenchError(description: "no notification within 5 s")
    }

    func markdown(_ result: Result) -> String {
        let difference = result.presenter.median > result.raw.median ? result.presenter.median - result.raw.median : 0
        return [
            "### Change notices: an uncoordinated write to a presented file",
            "",
            "\(rounds) in-place rewrites (open, write, close) per variant, 2 ms apart; time from calling `close` to the notice.",
            "",
            "| variant | median | p90 |",
            "|---|---|---|",
            "| floor: raw inotify `IN_CLOSE_WRITE`, thread blocked in `read` | **\(formatDuration(result.raw.median))** | \(formatDuration(result.raw.p90)) |",
            "| `FilePresenter.presentedItemDidChange()` | **\(formatDuration(result.presenter.median))** | \(formatDuration(result.presenter.p90)) |",
            "",
            "| measure | value | goal | |",
            "|---|---|---|---|",
            "| presenter − raw (medians) | \(formatDuration(difference)) | ≤ 1 ms | \(difference <= 1_000_000 ? "met" : "not met") |",
        ].joined(separator: "\n")
    }
}
