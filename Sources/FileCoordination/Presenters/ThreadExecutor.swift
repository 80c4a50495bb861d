#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Runs async work on the calling thread, which waits for it: the work's jobs run here, so
/// handing it over costs no thread switch.
///
/// Only while ``run(_:)`` waits does the thread take jobs; jobs that come later (a task the work
/// started, still running) go to ``PresenterExecutor``, so nothing waits for this thread to be
/// free again.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the job list is guarded by `state`; `ready` only counts.
    /// The jobs waiting for this thread, and whether it takes jobs now.
    private struct State {
        var jobs: [UnownedJob] = []
        var running = false
    }

    private let state = Mutex(State())
    /// Signalled for every job queued here and when the work is done.
    private let ready = DispatchSemaphore(value: 0)

    /// Queues `job` for this thread while it runs work, else hands it to ``PresenterExecutor``.
    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let here = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.jobs.append(unowned)
            return true
        }
        if here { ready.signal() } else { PresenterExecutor.shared.enqueue(unowned) }
    }

    /// Makes a blocking call from the work ``run(_:)`` runs: meanwhile, jobs of other tasks that
    /// prefer this executor go to ``PresenterExecutor`` instead of waiting for the call to return.
    func blocking<T>(_ call: () -> T) -> T {
        state.withLock { $0.running = false }
        defer { state.withLock { $0.running = true } }
        return call()
    }

    /// Runs `work` on this thread and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let result = Mutex<T?>(nil)
        state.withLock { $0.running = true }
        Task(executorPreference: self) {
            let value = await work()
            result.withLock { $0 = value }
            self.ready.signal()
        }
        while true {
            ready.wait()
            while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
            if let value = result.withLock({ $0 }) {
                let leftover = state.withLock { state -> [UnownedJob] in
                    state.running = false
                    defer { state.jobs = [] }
                    return state.jobs
                }
                for job in leftover { PresenterExecutor.shared.enqueue(job) }
                return value
            }
        }
    }
}
