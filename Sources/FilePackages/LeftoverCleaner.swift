#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Synchronization

/// Runs ``InterruptedSaveRecovery`` before an item is read or saved: in a small folder, a pass
/// over the folder at most once per state of it; in a large one, only the item's own interrupted
/// swap, with a pass over the whole folder one time in ``largeFolderSweepOdds``.
///
/// Litter only appears by adding entries, which changes the folder's modification time; a folder
/// whose time has not moved since it was found clean is not listed again. This keeps reading many
/// documents of one folder linear in their number.
///
/// A flat library of 100,000 documents changes with every save, and listing it costs tens of
/// milliseconds (a library of 1,000, a third of a millisecond of a server's save): opening or
/// saving one document must not. Litter of *other* items (the trees of
/// a crashed save) is garbage, not a danger to this item, so in a folder larger than
/// ``largeFolderSize`` it is left to the occasional pass (and to
/// `FileItem.completeInterruptedSaves(inFolderAt:)`), while the one thing this item's read or
/// save depends on, its own rename intent, is looked for by name.
package final class LeftoverCleaner: Sendable {
    package static let shared = LeftoverCleaner()

    private struct FolderKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private let clean = Mutex<[FolderKey: Int64]>([:])
    /// How long ago a folder must have changed for its time to vouch for it (one second).
    private static let racyInterval: Int64 = 1_000_000_000

    /// A folder whose size (`st_size`) is above this is large: more than one 4 KiB block of names on
    /// ext4 (50 to 100 entries; about 200 on tmpfs). A server saving into a library of 1,000 notes
    /// would otherwise list all of them at every save.
    package static let largeFolderSize: Int64 = 4 * 1024
    /// In a large folder, one open or save in this many passes over the whole folder (0: none;
    /// a task-local value, so that a test can choose).
    @TaskLocal package static var largeFolderSweepOdds = 64

    /// Whether an open or save in a folder of `status` should pass over the whole folder now
    /// (else it completes only its own item's interrupted swap).
    package static func sweepsWholeFolder(_ status: FileStatus) -> Bool {
        let odds = largeFolderSweepOdds
        return status.size <= largeFolderSize || (odds > 0 && Int.random(in: 0..<odds) == 0)
    }

    /// Puts right what interrupted saves left before the item at `location` is read.
    package func cleanIfNeeded(_ location: ItemLocation, using fileSystem: FileSystem) throws(DocumentKitError) {
        let parent = location.parent.rawValue
        guard let before = try? fileSystem.status(of: parent, name: location.parentPath) else { return }
        let key = FolderKey(device: before.device, inode: before.inode)
        if clean.withLock({ $0[key] }) == before.modificationTime { return }
        guard Self.sweepsWholeFolder(before) else {
            _ = try InterruptedSaveRecovery(fileSystem: fileSystem).completeIntent(
                ofItemNamed: location.name, in: parent, path: location.parentPath)
            return
        }
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
