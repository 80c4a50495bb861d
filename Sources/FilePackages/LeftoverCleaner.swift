#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Synchronization

/// Runs ``InterruptedSaveRecovery`` before an item is read, at most once per state of its folder.
///
/// Litter only appears by adding entries, which changes the folder's modification time; a folder
/// whose time has not moved since it was found clean is not listed again. This keeps reading many
/// documents of one folder linear in their number.
package final class LeftoverCleaner: Sendable {
    package static let shared = LeftoverCleaner()

    private struct FolderKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private let clean = Mutex<[FolderKey: Int64]>([:])
    /// How long ago a folder must have changed for its time to vouch for it (one second).
    private static let racyInterval: Int64 = 1_000_000_000

    package func cleanIfNeeded(_ location: ItemLocation, using fileSystem: FileSystem) throws(DocumentKitError) {
        let parent = location.parent.rawValue
        guard let before = try? fileSystem.status(of: parent, name: location.parentPath) else { return }
        let key = FolderKey(device: before.device, inode: before.inode)
        if clean.withLock({ $0[key] }) == before.modificationTime { return }
        let report = try InterruptedSaveRecovery(fileSystem: fileSystem).run(
            in: parent, path: location.parentPath, itemPath: location.path)
        guard report.busy.isEmpty, let after = try? fileSystem.status(of: parent, name: location.parentPath) else { return }
        // Timestamps are coarse (ext4 uses the clock tick): litter added within the same tick as
        // a recent time would not move it. Only a time safely in the past is trusted (as git does).
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nowNanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        guard nowNanoseconds - after.modificationTime > Self.racyInterval else { return }
        clean.withLock { $0[key] = after.modificationTime }
    }
}
