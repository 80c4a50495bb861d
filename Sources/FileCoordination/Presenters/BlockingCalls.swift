import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization

/// A few threads for the blocking calls of asynchronous coordinations (waiting for another
/// process's presenters to answer on a socket), so that no cooperative-pool thread waits in one.
///
/// Calls queue for a free thread: each waits at most a coordinator's presenter timeout, and what
/// it waits for (another process) never needs one of these threads to answer.
final class BlockingCalls: @unchecked Sendable {
    // @unchecked: the queued calls are guarded by `calls`; `available` only counts.
    /// The threads of the process, started when first needed.
    static let shared = BlockingCalls(threads: 4)

    private let calls = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    init(threads: Int) {
        for index in 0..<threads {
            startThread(named: "dk.blocking.\(index)") { [self] in self.serve() }
        }
    }

    /// Runs `call` on one of the threads and returns its result; the task waits without a thread.
    func run<T: Sendable>(_ call: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            calls.withLock { $0.append { continuation.resume(returning: call()) } }
            available.signal()
        }
    }

    private func serve() {
        while true {
            available.wait()
            guard let call = calls.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            call()
        }
    }
}
