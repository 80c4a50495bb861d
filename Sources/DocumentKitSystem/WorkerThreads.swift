import Dispatch
import Synchronization

/// A few named threads of DocumentKit's own that run blocking jobs in the order they were
/// submitted, for work that outlives the call that started it (a version completed after its
/// save returned).
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
        enum Wake { case idleThread, newThread(Int), none }
        // A busy thread looks for jobs before it waits: with none idle and no more to start, it takes this one.
        let wake = state.withLock { state -> Wake in
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                return .idleThread
            }
            guard state.started < maximumThreads else { return .none }
            state.started += 1
            return .newThread(state.started - 1)
        }
        switch wake {
        case .idleThread: available.signal()
        case .newThread(let index): startThread(named: "\(name).\(index)") { [self] in work() }
        case .none: break
        }
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
