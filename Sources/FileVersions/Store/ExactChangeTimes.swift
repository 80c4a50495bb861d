#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FileCoordination
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
/// Found out once per store by trying: a hidden folder in the store (`.store.dk-probe-…`),
/// changed 16 times in a row with a `stat` after each change; every change must move its change
/// time, and some by less than half a millisecond. With coarse timestamps, changes within one
/// clock tick leave it the same, and a change in a later tick moves it by at least a tick (1 ms
/// or more): a busy machine that spreads the changes over ticks still shows no step that short.
/// Never on a network, cluster or FUSE file system: their `stat` may answer from a cache that a
/// listing would refresh.
final class ExactChangeTimes: Sendable {
    /// What the probe found, and the store's device.
    private let known = Mutex<(exact: Bool, device: UInt64?)?>(nil)

    /// Whether the store folder `storeURL` has exact change times (probed at the first call;
    /// false when the probe can't be made: a store not there yet, or one this process can't
    /// write, which is then taken as it is).
    func inStore(at storeURL: URL, using fileSystem: FileSystem) -> Bool {
        found(at: storeURL, using: fileSystem)?.exact ?? false
    }

    /// Whether a file on `device` is known to have exact change times: the store's file system
    /// was probed (by a count) and does, and the file is on it (a library may hold another file
    /// system's mount point). Never probes: a read that asks this costs nothing more.
    func known(onDevice device: UInt64) -> Bool {
        known.withLock { $0.map { $0.exact && $0.device == device } ?? false }
    }

    /// For tests: takes the store's file system as found so, without probing.
    func assume(exact: Bool, device: UInt64?) {
        known.withLock { $0 = (exact, device) }
    }

    private func found(at storeURL: URL, using fileSystem: FileSystem) -> (exact: Bool, device: UInt64?)? {
        if let known = known.withLock({ $0 }) { return known }
        let result = Self.probe(in: storeURL, using: fileSystem)
        guard let status = try? fileSystem.status(of: storeURL.path, in: AT_FDCWD) else {
            return result.map { ($0, nil) }
        }
        let found = (exact: result ?? false, device: Optional(status.device))
        known.withLock { $0 = found }
        return found
    }

    /// The names of probe folders (``probe(in:rounds:using:)``) start with this.
    static let probePrefix = TemporaryName.prefix(for: "store") + "probe-"

    /// Changes a hidden folder of `folder` `rounds` times twice (a subfolder made, then
    /// removed), with a `stat` before and after each change; true if every change moved its
    /// change time and at least a quarter of them by less than half a millisecond (tried up to
    /// three times: on a busy machine the changes may all be spread out). Nil when the folder
    /// can't be made. Probe folders a killed process left are removed first.
    static func probe(in folder: URL, rounds: Int = 8, using fileSystem: FileSystem) -> Bool? {
        if RemoteFileSystems.name(at: folder.path) != nil { return false }
        removeLeftProbes(in: folder, using: fileSystem)
        let probe = folder.appendingPathComponent(probePrefix + TemporaryName.randomSuffix()).path
        do { try fileSystem.makeDirectory(probe, in: AT_FDCWD, mode: 0o700) } catch { return nil }
        defer {
            _ = try? fileSystem.removeDirectory(probe + "/c", in: AT_FDCWD)
            _ = try? fileSystem.removeDirectory(probe, in: AT_FDCWD)
        }
        do throws(Errno) {
            for _ in 0..<3 {
                var before = try fileSystem.status(of: probe, in: AT_FDCWD).changeTime
                var fine = 0
                for round in 0..<rounds * 2 {
                    if round.isMultiple(of: 2) {
                        try fileSystem.makeDirectory(probe + "/c", in: AT_FDCWD, mode: 0o700)
                    } else {
                        try fileSystem.removeDirectory(probe + "/c", in: AT_FDCWD)
                    }
                    let after = try fileSystem.status(of: probe, in: AT_FDCWD).changeTime
                    // The same change time after a change: coarse timestamps.
                    guard after != before else { return false }
                    if after - before < 500_000 { fine += 1 }
                    before = after
                }
                if fine * 4 >= rounds * 2 { return true }
            }
            return false
        } catch {
            return nil
        }
    }

    /// Removes the probe folders in `folder` a killed process left (a probe takes microseconds:
    /// one unchanged for a minute is left over).
    private static func removeLeftProbes(in folder: URL, using fileSystem: FileSystem) {
        guard let opened = try? fileSystem.open(folder.path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return }
        let folderDescriptor = Descriptor(owning: opened)
        let fd = folderDescriptor.rawValue
        let minuteAgo = Int64((Date().timeIntervalSince1970 - 60) * 1_000_000_000)
        for name in (try? fileSystem.contentsOfDirectory(fd, name: folder.path)) ?? [] where name.hasPrefix(probePrefix) {
            guard let status = try? fileSystem.status(of: name, in: fd), status.changeTime < minuteAgo else { continue }
            _ = try? fileSystem.removeDirectory(name + "/c", in: fd)
            _ = try? fileSystem.removeDirectory(name, in: fd)
        }
        withExtendedLifetime(folderDescriptor) {}
    }
}
