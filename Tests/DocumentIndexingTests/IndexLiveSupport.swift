@testable import DocumentIndexing
import DocumentKit
import Foundation
import Synchronization

/// Collects the batches of an index's updates in the background, for tests to wait on.
final class BatchCollector: Sendable {
    final class Storage: Sendable {
        let state = Mutex<(batches: [IndexBatch], failure: DocumentKitError?, finished: Bool)>(([], nil, false))
    }

    private let storage = Storage()
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ updates: IndexUpdates) {
        let storage = self.storage
        let task = Task {
            do throws(DocumentKitError) {
                for try await batch in updates { storage.state.withLock { $0.batches.append(batch) } }
                storage.state.withLock { $0.finished = true }
            } catch {
                storage.state.withLock {
                    $0.failure = error
                    $0.finished = true
                }
            }
        }
        self.task.withLock { $0 = task }
    }

    var batches: [IndexBatch] { storage.state.withLock { $0.batches } }
    var failure: DocumentKitError? { storage.state.withLock { $0.failure } }
    var finished: Bool { storage.state.withLock { $0.finished } }

    /// Waits (up to 10 s) until `condition` holds of the batches so far; whether it did.
    func wait(until condition: ([IndexBatch]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition(batches) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(batches)
    }

    /// Waits (up to 10 s) until the sequence ended.
    func waitForEnd() async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !finished { try? await Task.sleep(for: .milliseconds(10)) }
        return finished
    }

    func cancel() { task.withLock { $0?.cancel() } }
}

extension Array where Element == IndexBatch {
    var updates: [IndexBatch] { filter { $0.kind == .update } }
    var addedPaths: [String] { flatMap { $0.added.map(\.relativePath) } }
    var removedPaths: [String] { flatMap { $0.removed.map(\.relativePath) } }
    var changedPaths: [String] { flatMap { $0.changed.map(\.relativePath) } }
}
