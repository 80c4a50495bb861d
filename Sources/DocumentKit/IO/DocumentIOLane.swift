import DocumentKitSystem
import Foundation
import Synchronization

/// The threads every document's reads and saves run on: a few (at most ``threadCount``, started
/// as work needs them), shared by all the documents of the process.
///
/// A document's I/O blocks (`read`, `fsync`, `rename`): it must not run on Swift's cooperative
/// pool, and a `DispatchQueue` per document lets GCD start a thread for every document whose work
/// blocks — up to its limit of about 255, at which point work that would unblock them (the
/// presenters' queue) finds no thread left. Here, ``threadCount`` threads take the documents'
/// lanes in turn, whatever the number of open documents. What may wait long (a lock another
/// process holds, a presenter's reply) is waited for before the work comes here, without a
/// thread (see `Document.perform(coordinating:_:)`).
final class DocumentIOPool: Sendable {
    /// The pool of the process.
    static let shared = DocumentIOPool(threads: threadCount)

    /// How many threads the pool runs: the processor count, at least 4 and at most 16.
    static var threadCount: Int { min(16, max(4, ProcessInfo.processInfo.activeProcessorCount)) }

    /// `dk.io.N`, started as lanes need them.
    private let threads: WorkerThreads

    init(threads: Int) {
        self.threads = WorkerThreads(name: "dk.io", maximumThreads: threads)
    }

    /// Queues `lane`, which has work and is not queued or running.
    func schedule(_ lane: DocumentIOLane) {
        threads.run { lane.runNext() }
    }
}

/// One document's serial lane: its work runs one piece at a time, in the order it was submitted
/// (a ticket taken when submitted), the blocking part of each on whichever ``DocumentIOPool``
/// thread is free. A piece of work may first wait, without a thread, for a coordination (see
/// `Document.perform(coordinating:_:)`); later work waits for it. A document with no work holds
/// no thread.
final class DocumentIOLane: Sendable {
    private struct State {
        var nextTicket = 0
        var serving = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Blocking calls waiting for a pool thread.
        var calls: [@Sendable () -> Void] = []
        var scheduled = false
    }

    private let state = Mutex(State())
    private let pool: DocumentIOPool

    init(pool: DocumentIOPool = .shared) { self.pool = pool }

    /// A place in the lane's order, taken now; wait for it with ``wait(for:)``, then ``leave()``.
    func ticket() -> Int {
        state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
    }

    /// Waits (without a thread) until the work before `ticket` is done.
    func wait(for ticket: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.serving == ticket { return true }
                state.waiting[ticket] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Ends the current piece of work: the next one may start.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.serving += 1
            return state.waiting.removeValue(forKey: state.serving)
        }
        next?.resume()
    }

    /// Submits `job` after the lane's earlier work (the order is taken now).
    func async(execute job: @escaping @Sendable () -> Void) {
        let ticket = ticket()
        Task {
            await wait(for: ticket)
            await onThread(job)
            leave()
        }
    }

    /// Runs the blocking `call` on a pool thread; the task waits without a thread.
    func onThread<T: Sendable>(_ call: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let schedule = state.withLock { state -> Bool in
                state.calls.append { continuation.resume(returning: call()) }
                guard !state.scheduled else { return false }
                state.scheduled = true
                return true
            }
            if schedule { pool.schedule(self) }
        }
    }

    /// Runs the lane's next call (on a pool thread), then queues the lane again if it has more.
    func runNext() {
        let call = state.withLock { state -> (@Sendable () -> Void)? in state.calls.isEmpty ? nil : state.calls.removeFirst() }
        call?()
        let more = state.withLock { state -> Bool in
            if !state.calls.isEmpty { return true }
            state.scheduled = false
            return false
        }
        if more { pool.schedule(self) }
    }
}
