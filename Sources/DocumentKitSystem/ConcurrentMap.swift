import Dispatch
import Foundation

/// `transform` of `0..<count`, in order: on up to 4 threads (the machine's cores) from `threshold`
/// items on, each thread taking one contiguous range.
package func concurrentMap<T: Sendable>(_ count: Int, threshold: Int, _ transform: @Sendable (Int) -> T) -> [T] {
    guard count >= threshold, concurrentMapWorkers > 1 else { return (0..<count).map(transform) }
    let workers = concurrentMapWorkers
    let results = Slots<T>(count: count)
    let chunk = (count + workers - 1) / workers
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
        for index in (worker * chunk)..<min(count, (worker + 1) * chunk) { results.set(index, transform(index)) }
    }
    return results.take()
}

/// The threads of ``concurrentMap(_:threshold:_:)``: the machine's cores, at most 4, found once
/// (`activeProcessorCount` reads the cgroup's CPU files at every call).
private let concurrentMapWorkers = min(ProcessInfo.processInfo.activeProcessorCount, 4)

/// One slot per item of ``concurrentMap(_:threshold:_:)``, each written by exactly one worker
/// before `concurrentPerform` returns, and read only after: no two threads touch one slot.
private final class Slots<T>: @unchecked Sendable {
    private let base: UnsafeMutablePointer<T?>
    private let count: Int

    init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: nil, count: count)
        self.count = count
    }

    func set(_ index: Int, _ value: T) { base[index] = value }

    func take() -> [T] { UnsafeBufferPointer(start: base, count: count).map { $0! } }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
