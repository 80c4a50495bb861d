import Synchronization

/// One presenter's serial delivery: messages run one at a time, in the order they were sent.
///
/// No task waits while the mailbox is empty; a drain task starts when the first message
/// arrives and ends when the mailbox is empty again, so idle presenters cost no task.
final class PresenterMailbox: Sendable {
    typealias Message = @Sendable () async -> Void

    private struct State {
        var queue: [Message] = []
        var draining = false
    }

    private let state = Mutex(State())

    /// Adds a message; starts delivery if none is running.
    func send(_ message: @escaping Message) {
        let start = state.withLock { state -> Bool in
            state.queue.append(message)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if start { Task(executorPreference: PresenterExecutor.shared) { await self.drain() } }
    }

    /// Runs `body` in turn with the mailbox's other messages and returns its result.
    ///
    /// `inline`: if no message is being delivered, `body` runs in the calling task (no hop to
    /// another thread) while the mailbox holds later messages back; only for callers whose task
    /// runs on a thread of its own (``ThreadExecutor``), never on Swift's shared pool.
    func perform<T: Sendable>(inline: Bool = false, _ body: @escaping @Sendable () async -> T) async -> T {
        if inline, claimIfIdle() {
            let value = await body()
            let more = state.withLock { state -> Bool in
                if state.queue.isEmpty { state.draining = false }
                return state.draining
            }
            if more { Task(executorPreference: PresenterExecutor.shared) { await self.drain() } }
            return value
        }
        return await withCheckedContinuation { continuation in
            send { continuation.resume(returning: await body()) }
        }
    }

    /// Marks the mailbox as delivering if it was idle; whether it was.
    private func claimIfIdle() -> Bool {
        state.withLock { state in
            if state.draining { return false }
            state.draining = true
            return true
        }
    }

    private func drain() async {
        while true {
            let next = state.withLock { state -> Message? in
                if state.queue.isEmpty {
                    state.draining = false
                    return nil
                }
                return state.queue.removeFirst()
            }
            guard let next else { return }
            await next()
        }
    }
}
