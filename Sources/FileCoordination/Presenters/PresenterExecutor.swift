#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization

/// The threads presenter callbacks run on, apart from Swift's shared cooperative pool.
///
/// The blocking coordination API must wait for presenter callbacks of its own process; if those
/// ran on the cooperative pool and every pool thread were blocked in such a wait (two threads on
/// a two-core machine), nothing could run them. On these threads they always can.
final class PresenterExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the job queue is guarded by `jobs`; `available` only counts.
    static let shared = PresenterExecutor(threads: 4)

    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    init(threads: Int) {
        for index in 0..<threads {
            startThread(named: "dk.presenters.\(index)") { [self] in self.run() }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job))
    }

    /// Queues a job another executor hands over.
    func enqueue(_ job: UnownedJob) {
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    private func run() {
        while true {
            available.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
