import Dispatch
import Synchronization
import SystemPackage

extension FileSystem {
    /// A descriptor for ``synchronize(together:)``: a file (``synchronize(_:name:)``) or a
    /// directory (``synchronizeDirectory(_:name:)``).
    package struct FlushItem: Sendable {
        package var fd: CInt
        package var name: String
        package var isDirectory: Bool

        package init(fd: CInt, name: String, isDirectory: Bool) {
            self.fd = fd
            self.name = name
            self.isDirectory = isDirectory
        }
    }

    /// The threads that flush the items of a batch beside its caller's.
    private static let flushThreads = WorkerThreads(name: "dk.flush", maximumThreads: 4)

    /// `fsync(2)` of every item at once: each on its own thread (this one and up to four of
    /// DocumentKit's that are free now; what finds none runs here after this thread's first), so
    /// that their disk writes and cache flushes overlap (a device serves the flushes waiting
    /// together with one), where one after the other each waits for the last.
    /// Returns each item's error, in order (nil: flushed); nothing orders the items among
    /// themselves, so a caller batches only what may reach the disk in any order. Through a file
    /// system that intercepts its calls (fault injection), one after the other in order, so that
    /// a fault aimed at the n-th call lands on the same item every run.
    package func synchronize(together items: [FlushItem]) -> [Errno?] {
        guard items.count > 1, interceptor == nil else { return items.map { flush($0) } }
        let results = Mutex<[Errno?]>(Array(repeating: nil, count: items.count))
        let done = DispatchSemaphore(value: 0)
        // Only threads free now take an item: one never waits behind another batch's (a flush
        // stuck on a hung file system holds its own thread, not this batch); the rest run here.
        var mine: [Int] = [0]
        var handedOut = 0
        for index in items.indices.dropFirst() {
            let item = items[index]
            let taken = Self.flushThreads.runIfFree { [self] in
                let error = flush(item)
                results.withLock { $0[index] = error }
                done.signal()
            }
            if taken { handedOut += 1 } else { mine.append(index) }
        }
        let own = mine.map { (index: $0, error: flush(items[$0])) }
        for _ in 0..<handedOut { done.wait() }
        return results.withLock { results in
            for (index, error) in own { results[index] = error }
            return results
        }
    }

    /// One item of ``synchronize(together:)``: its error, or nil.
    private func flush(_ item: FlushItem) -> Errno? {
        do throws(Errno) {
            if item.isDirectory { try synchronizeDirectory(item.fd, name: item.name) } else { try synchronize(item.fd, name: item.name) }
            return nil
        } catch {
            return error
        }
    }
}
