#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Foundation
import Synchronization
import SystemPackage

/// Whether the file system of a store gives a folder a new change time at every change made
/// after its change time was read (Linux 6.13 and later: "multigrain" timestamps on ext4, XFS,
/// Btrfs, tmpfs). Then a folder whose `stat` is the same as at a listing has the same names, at
/// once, without the racy-timestamp margin that coarse timestamps (one clock tick: 1 to 10 ms)
/// need; ``VersionStore/unresolvedConflictCount(ofItemAt:)`` skips the listing of an unchanged
/// folder only then.
///
/// Found out once per store by trying: a hidden folder in the store, changed several times in a
/// row with a `stat` before each change; every change must move its change time. A file system
/// with coarse timestamps leaves most of them the same (the changes take microseconds).
final class ExactChangeTimes: Sendable {
    private let known = Mutex<Bool?>(nil)

    /// Whether the store folder `storeURL` has exact change times (probed at the first call;
    /// false when the probe can't be made: a store not there yet, or one this process can't
    /// write, which is then taken as it is).
    func inStore(at storeURL: URL, using fileSystem: FileSystem) -> Bool {
        if let known = known.withLock({ $0 }) { return known }
        let result = Self.probe(in: storeURL, using: fileSystem)
        if result != nil || (try? fileSystem.status(of: storeURL.path, in: AT_FDCWD)) != nil {
            known.withLock { $0 = result ?? false }
        }
        return result ?? false
    }

    /// Changes a hidden folder of `folder` `rounds` times, with a `stat` before and after each
    /// change; true if every change moved its change time. Nil when the folder can't be made.
    static func probe(in folder: URL, rounds: Int = 8, using fileSystem: FileSystem) -> Bool? {
        let probe = folder.appendingPathComponent(".probe-\(TemporaryName.randomSuffix())").path
        do { try fileSystem.makeDirectory(probe, in: AT_FDCWD, mode: 0o700) } catch { return nil }
        defer {
            _ = try? fileSystem.removeDirectory(probe + "/c", in: AT_FDCWD)
            _ = try? fileSystem.removeDirectory(probe, in: AT_FDCWD)
        }
        do throws(Errno) {
            var before = try fileSystem.status(of: probe, in: AT_FDCWD).changeTime
            for _ in 0..<rounds {
                try fileSystem.makeDirectory(probe + "/c", in: AT_FDCWD, mode: 0o700)
                let made = try fileSystem.status(of: probe, in: AT_FDCWD).changeTime
                try fileSystem.removeDirectory(probe + "/c", in: AT_FDCWD)
                let removed = try fileSystem.status(of: probe, in: AT_FDCWD).changeTime
                guard made != before, removed != made else { return false }
                before = removed
            }
            return true
        } catch {
            return nil
        }
    }
}
