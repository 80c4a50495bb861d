import Dispatch
import DocumentKitSystem
import Synchronization

/// The versions this process is still completing after the saves that kept them returned
/// (``VersionStore/VersionCompletion/afterSaveReturns``), by document folder of a store: what a
/// listing or a save of the same document waits for, so that the process reads its own saves.
final class PendingVersions: Sendable {
    /// The registry of the process: stores of one library folder opened twice share it.
    static let shared = PendingVersions()

    private struct Folder {
        let group = DispatchGroup()
        var count = 0
    }

    private let folders = Mutex<[String: Folder]>([:])
    /// Threads of their own: a completion's `fsync`s never hold a thread of Swift's cooperative
    /// pool (a `DispatchQueue`'s jobs run on the same GCD threads on Linux), which would delay the
    /// answer to the very request whose save it completes.
    private let threads = WorkerThreads(name: "dk.versions", maximumThreads: 2)

    /// True on a thread running a completion: it never waits for itself.
    @TaskLocal private static var isCompleting = false

    /// Runs `work` on one of the completion threads as a completion of `folder`'s versions.
    func run(_ folder: String, _ work: @escaping @Sendable () -> Void) {
        let group = folders.withLock { folders in
            var entry = folders[folder] ?? Folder()
            entry.count += 1
            entry.group.enter()
            folders[folder] = entry
            return entry.group
        }
        // Released (with what it holds: a save's lock on the folder) before waiters are woken.
        let job = Job(work)
        threads.run {
            if let work = job.take() { Self.$isCompleting.withValue(true) { work() } }
            self.folders.withLock { folders in
                guard var entry = folders[folder] else { return }
                entry.count -= 1
                folders[folder] = entry.count == 0 ? nil : entry
            }
            group.leave()
        }
    }

    /// A completion, taken once by the thread that runs it.
    private final class Job: Sendable {
        private let work: Mutex<(@Sendable () -> Void)?>
        init(_ work: @escaping @Sendable () -> Void) { self.work = Mutex(work) }
        func take() -> (@Sendable () -> Void)? { work.withLock { $0.take() } }
    }

    /// Returns once no completion of `folder` runs or waits to (at once on a completion's own thread).
    func wait(for folder: String) {
        guard !Self.isCompleting, let group = folders.withLock({ $0[folder]?.group }) else { return }
        group.wait()
    }

    /// Returns once every completion of a folder whose path starts with `prefix`, pending when
    /// it was called, is done (those that start meanwhile are not waited for: a busy server
    /// always has some).
    func wait(forEveryFolderUnder prefix: String) {
        guard !Self.isCompleting else { return }
        let groups = folders.withLock { $0.filter { $0.key.hasPrefix(prefix) }.map(\.value.group) }
        for group in groups { group.wait() }
    }
}
