import Dispatch
import Synchronization

/// A few named threads of DocumentKit's own that run blocking jobs in the order they were
/// submitted: documents' reads and saves (`dk.io`), versions completed after their save returned
/// (`dk.versions`), the `fsync`s of a batch flushed at once (`dk.flush`, ``runIfFree(_:)``).
///
/// Not a `DispatchQueue`: on Linux a queue's jobs run on the same GCD threads as Swift's
/// cooperative pool, so a job blocked in `fsync` would hold one of its few threads (one per
/// core) and delay every task behind it. The threads start as jobs need them, at most
/// `maximumThreads`, and stay: a process holds no more than that, whatever the load.
package final class WorkerThreads: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var started = 0
        var idle = 0
    }

    private let name: String
    private let maximumThreads: Int
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    /// Threads named `name.0`, `name.1`… (at most 15 bytes show), up to `maximumThreads`.
    package init(name: String, maximumThreads: Int) {
        self.name = name
        self.maximumThreads = max(1, maximumThreads)
    }

    /// Queues `job` after the jobs submitted before it; a free thread runs it.
    package func run(_ job: @escaping @Sendable () -> Void) {
        // A busy thread looks for jobs before it waits: with none idle and no more to start, it takes this one.
        _ = submit(job, waitingForABusyThread: true)
    }

    /// Queues `job` only if a thread is free for it now (one waiting, or one more that may be
    /// started); false, with nothing queued, otherwise: the caller runs it itself, so that it
    /// never waits behind other callers' jobs (a flush stuck on a hung file system, say).
    package func runIfFree(_ job: @escaping @Sendable () -> Void) -> Bool {
        submit(job, waitingForABusyThread: false)
    }

    /// Queues `job` for an idle thread, or a new one; else, if `waitingForABusyThread`, for the
    /// next thread to finish. Returns whether it was queued.
    private func submit(_ job: @escaping @Sendable () -> Void, waitingForABusyThread: Bool) -> Bool {
        enum Wake { case idleThread, newThread(Int), busyThread, none }
        let wake = state.withLock { state -> Wake in
            if state.idle > 0 {
                state.jobs.append(job)
                state.idle -= 1
                return .idleThread
            }
            if state.started < maximumThreads {
                state.jobs.append(job)
                state.started += 1
                return .newThread(state.started - 1)
            }
            guard waitingForABusyThread else { return .none }
            state.jobs.append(job)
            return .busyThread
        }
        switch wake {
        case .idleThread: available.signal()
        case .newThread(let index): startThread(named: "\(name).\(index)") { [self] in work() }
        case .busyThread: break
        case .none: return false
        }
        return true
    }

    /// A thread's loop: the next job, or a wait for one.
    private func work() {
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                if state.jobs.isEmpty {
                    state.idle += 1
                    return nil
                }
                return state.jobs.removeFirst()
            }
            if let job {
                job()
            } else {
                available.wait()
            }
        }
    }
}
