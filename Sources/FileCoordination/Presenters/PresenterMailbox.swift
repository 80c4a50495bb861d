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
    func perform<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await withCheckedContinuation { continuation in
            send { continuation.resume(returning: await body()) }
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
