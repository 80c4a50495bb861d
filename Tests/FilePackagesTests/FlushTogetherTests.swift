#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization
import SystemPackage
import Testing

@Suite struct FlushTogetherTests {
    /// `count` new files of `dir`, open for writing, each with a line written.
    private func openFiles(_ count: Int, in dir: TemporaryDirectory) throws -> [CInt] {
        try (0..<count).map { index in
            let fd = open(dir.appending("f\(index)").path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            try #require(fd >= 0)
            #expect(write(fd, "line \(index)\n", 7) == 7)
            return fd
        }
    }

    @Test("files and folders flushed together each get their own result, in order, and a bad descriptor fails alone")
    func resultsComeBackInOrder() throws {
        let dir = try TemporaryDirectory()
        let files = try openFiles(6, in: dir)
        defer { files.forEach { close($0) } }
        let folder = open(dir.url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(folder) }
        var items = files.enumerated().map { FileSystem.FlushItem(fd: $1, name: "f\($0)", isDirectory: false) }
        items.insert(FileSystem.FlushItem(fd: 9_999, name: "closed", isDirectory: false), at: 3)
        items.append(FileSystem.FlushItem(fd: folder, name: "dir", isDirectory: true))
        // Through the live file system: the items run on several threads at once.
        let results = FileSystem.live.synchronize(together: items)
        #expect(results.count == items.count)
        for (index, result) in results.enumerated() {
            #expect(result == (index == 3 ? Errno.badFileDescriptor : nil), "\(items[index].name): \(String(describing: result))")
        }
    }

    @Test("through a file system that injects faults, a batch is flushed one item after the other, in order, and the fault lands where it is aimed")
    func injectedFaultsLandInOrder() throws {
        let dir = try TemporaryDirectory()
        let files = try openFiles(4, in: dir)
        defer { files.forEach { close($0) } }
        let faults = FaultInjector()
        faults.fail(call: 3, with: .ioError)
        let items = files.enumerated().map { FileSystem.FlushItem(fd: $1, name: "f\($0)", isDirectory: false) }
        let results = faults.fileSystem.synchronize(together: items)
        #expect(results == [nil, nil, Errno.ioError, nil])
        #expect(faults.trace.filter { $0.call == .synchronize }.map(\.name) == ["f0", "f1", "f2", "f3"])
    }

    @Test("worker threads run every job, no more threads than their bound however many jobs wait")
    func workerThreadsStayBounded() throws {
        let workers = WorkerThreads(name: "dk.test", maximumThreads: 3)
        let running = Mutex((now: 0, most: 0, done: 0))
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<200 {
            workers.run {
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                usleep(200)
                running.withLock { $0.now -= 1; $0.done += 1 }
                finished.signal()
            }
        }
        for _ in 0..<200 { finished.wait() }
        let state = running.withLock { $0 }
        #expect(state.done == 200)
        #expect(state.most <= 3 && state.most >= 1, "\(state.most) at once")
        // Idle now: a later job still runs (on a thread that waited).
        let again = DispatchSemaphore(value: 0)
        workers.run { again.signal() }
        #expect(again.wait(timeout: .now() + 10) == .success)
    }

    @Test("a job offered when every thread is busy is handed back: the caller runs it, behind no one else's")
    func busyThreadsHandJobsBack() throws {
        let workers = WorkerThreads(name: "dk.test", maximumThreads: 2)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            #expect(workers.runIfFree {
                started.signal()
                release.wait()  // a flush stuck on a hung file system
            })
        }
        for _ in 0..<2 { #expect(started.wait(timeout: .now() + 10) == .success) }
        #expect(!workers.runIfFree {}, "both threads are held: the job is the caller's")
        release.signal()
        release.signal()
        // Free again (once a held thread is back waiting): a job is taken.
        let ran = DispatchSemaphore(value: 0)
        var taken = false
        for _ in 0..<200 where !taken {
            taken = workers.runIfFree { ran.signal() }
            if !taken { usleep(5_000) }
        }
        #expect(taken && ran.wait(timeout: .now() + 10) == .success)
    }
}
