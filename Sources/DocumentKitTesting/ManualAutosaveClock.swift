import DocumentKit
import Synchronization

/// A clock for autosave tests: time moves only when the test calls ``advance(by:)``.
///
/// ```swift
/// let clock = ManualAutosaveClock()
/// document.autosavePolicy = AutosavePolicy(quietPeriod: .seconds(2), clock: clock)
/// try document.update { $0.text += "x" }
/// await clock.advance(by: .seconds(2))      // the autosave runs
/// ```
public final class ManualAutosaveClock: AutosaveClock {
    private struct Sleeper {
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: Duration = .zero
        var sleepers: [Int: Sleeper] = [:]
        var next = 0
    }
    private let state = Mutex(State())

    /// A clock at time zero.
    public init() {}

    public var now: Duration { state.withLock { $0.now } }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if Task.isCancelled || deadline <= state.now { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward, waking every sleeper whose deadline has come, then gives the woken
    /// tasks time to run (until the clock has no more work for a moment).
    public func advance(by duration: Duration) async {
        let woken = state.withLock { state -> [Sleeper] in
            state.now += duration
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for key in due.keys { state.sleepers.removeValue(forKey: key) }
            return Array(due.values)
        }
        for sleeper in woken { sleeper.continuation.resume() }
        await settle()
    }

    /// Lets woken tasks run: yields until no sleeper is added or woken for a few rounds.
    public func settle() async {
        for _ in 0..<50 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
