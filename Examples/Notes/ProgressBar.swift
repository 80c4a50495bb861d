#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation
import Synchronization

/// A progress bar on standard error for an export or import: drawn only when standard error is a
/// terminal, only once the work has taken about a second, and at most ten times a second; erased
/// when the work ends.
final class ProgressBar: Sendable {
    private struct State {
        var drawn = false
        var lastDraw: ContinuousClock.Instant?
    }

    private let verb: String
    private let started = ContinuousClock.now
    /// How long the work runs before the bar appears: a second, or `$NOTES_PROGRESS_DELAY_MS` (tests).
    private let delay: Duration = .milliseconds(
        ProcessInfo.processInfo.environment["NOTES_PROGRESS_DELAY_MS"].flatMap(Int.init) ?? 1_000)
    private let enabled: Bool
    private let state = Mutex(State())

    /// A bar for `verb` ("Exporting"), drawn if standard error is a terminal and `quiet` is false.
    init(_ verb: String, quiet: Bool = false) {
        self.verb = verb
        enabled = !quiet && isatty(STDERR_FILENO) != 0
    }

    /// The handler to give DocumentKit, or nil when nothing will be drawn.
    var handler: ArchiveProgressHandler? {
        guard enabled else { return nil }
        return { [self] progress in self.update(progress) }
    }

    private func update(_ progress: ArchiveProgress) {
        let now = ContinuousClock.now
        guard now - started >= delay else { return }
        let line: String? = state.withLock { state in
            if let last = state.lastDraw, now - last < .milliseconds(100) { return nil }
            state.lastDraw = now
            state.drawn = true
            return Self.line(verb, progress)
        }
        if let line { FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K").utf8)) }
    }

    /// Erases the bar, if it was drawn.
    func finish() {
        let drawn = state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// "Exporting [########------------] 40%  41.9 MB  400/1000 entries".
    static func line(_ verb: String, _ progress: ArchiveProgress) -> String {
        let megabytes = String(format: "%.1f MB", Double(progress.completedBytes) / 1_000_000)
        let entries = progress.totalEntries.map { "\(progress.completedEntries)/\($0) entries" } ?? "\(progress.completedEntries) entries"
        guard let fraction = progress.fractionCompleted else { return "\(verb)  \(megabytes)  \(entries)" }
        let width = 24
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "\(verb) [\(bar)] \(Int(fraction * 100))%  \(megabytes)  \(entries)"
    }
}
