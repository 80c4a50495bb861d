import DocumentKitSystem
import Foundation
import Synchronization

/// Set when the task that started some work is cancelled; read by the work on another thread,
/// where `Task.isCancelled` knows nothing of that task.
final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func cancel() { value.store(true, ordering: .relaxed) }

    var isCancelled: Bool { value.load(ordering: .relaxed) }
}

/// Runs an archive's blocking work (reads, libarchive, `fsync`, waits for coordinated access)
/// on a thread of its own, never on Swift's cooperative pool, whose few threads every task of
/// the process shares: a server exporting a library still answers its other requests.
enum ArchiveThread {
    /// Runs `body` on a new thread named `name` and returns what it gives; cancelling the
    /// calling task sets the flag `body` is given.
    static func run<T: Sendable>(
        named name: String, _ body: @escaping @Sendable (CancellationFlag) throws(DocumentKitError) -> T
    ) async throws(DocumentKitError) -> T {
        let flag = CancellationFlag()
        let result: Result<T, DocumentKitError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                startThread(named: name) {
                    do throws(DocumentKitError) {
                        continuation.resume(returning: .success(try body(flag)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        } onCancel: {
            flag.cancel()
        }
        return try result.get()
    }
}
