#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@testable import FileCoordination

/// A watcher that runs for months must not keep what nobody asks for: rename halves (paths) are
/// kept only for a client that looks renames up, and even then at most ``FileWatcher/renameLimit``.
@Suite struct WatcherRenameMemoryTests {
    /// Renames `count` files in `folder` there and back with a watcher on it; returns the watcher
    /// once it has delivered every event of them.
    private func renameMany(_ count: Int, keepsRenames: Bool, in folder: URL) throws -> FileWatcher {
        let delivered = Mutex(0)
        let watcher = try FileWatcher(keepsRenames: keepsRenames) { events, _, _ in
            delivered.withLock { $0 += events.filter { $0.mask & UInt32(IN_MOVED_TO) != 0 }.count }
        }
        let a = folder.appendingPathComponent("a").path
        let b = folder.appendingPathComponent("b").path
        #expect(FileManager.default.createFile(atPath: a, contents: Data("x".utf8)))
        try watcher.watch(folder.path)
        for index in 0..<count {
            let (from, to) = index.isMultiple(of: 2) ? (a, b) : (b, a)
            #expect(rename(from, to) == 0)
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while delivered.withLock({ $0 }) < count, ContinuousClock.now < deadline { usleep(2_000) }
        #expect(delivered.withLock { $0 } == count)
        return watcher
    }

    @Test("a watcher not asked to keep renames holds no rename halves after thousands of renames")
    func renamesNotKeptUnlessAsked() throws {
        let folder = try TemporaryDirectory(prefix: "watcher-renames")
        let watcher = try renameMany(3_000, keepsRenames: false, in: folder.url)
        defer { watcher.stop() }
        #expect(watcher.keptRenameCount == 0)
        #expect(watcher.destination(ofRenameFrom: folder.appending("a").path) == nil)
    }

    @Test("a watcher keeping renames that nobody forgets stays under its limit and still knows the latest ones")
    func keptRenamesAreBounded() throws {
        let folder = try TemporaryDirectory(prefix: "watcher-renames")
        let count = FileWatcher.renameLimit * 2 + 1
        let watcher = try renameMany(count, keepsRenames: true, in: folder.url)
        defer { watcher.stop() }
        #expect(watcher.keptRenameCount > 0)
        #expect(watcher.keptRenameCount <= FileWatcher.renameLimit + 1)
        // The last rename (an odd count ends with a → b) is still known.
        #expect(watcher.destination(ofRenameFrom: folder.appending("a").path) == folder.appending("b").path)
        watcher.forgetRenames(through: Int.max)
        #expect(watcher.keptRenameCount == 0)
    }
}
