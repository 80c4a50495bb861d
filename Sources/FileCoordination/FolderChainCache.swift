#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Resolved folder chains, so that coordinating many items of a few folders does not resolve
/// every folder on the path again each time.
///
/// An entry is used only while the folder path still leads to the same folder (one `stat`) and
/// for at most a second: a rename that reshuffles folders above it without changing that folder
/// is noticed within the second.
final class FolderChainCache: Sendable {
    struct Entry: Sendable {
        let device: UInt64
        let inode: UInt64
        /// The folder's components (from below `/` down to the folder itself) and its real path.
        let components: [ItemPath.Component]
        let realPath: String
        let caseInsensitive: Bool
        let expires: UInt64
    }

    /// An item resolved in a cached folder: valid while the folder's entry is.
    struct ItemEntry: Sendable {
        let folder: String
        let item: ItemPath
    }

    private struct State {
        var folders: [String: Entry] = [:]
        var items: [String: ItemEntry] = [:]
    }

    private let state = Mutex(State())
    private static let lifetime: UInt64 = 1_000_000_000
    private static let capacity = 4_096

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The entry for `folder` if it is still valid.
    func lookup(_ folder: String) -> Entry? {
        guard let entry = state.withLock({ $0.folders[folder] }) else { return nil }
        return validated(entry, folder) ? entry : nil
    }

    /// The item resolved earlier from the path `requested`, if its folder's entry is still valid.
    func lookupItem(_ requested: String) -> ItemPath? {
        let found: (ItemEntry, Entry)? = state.withLock { state in
            guard let item = state.items[requested], let folder = state.folders[item.folder] else { return nil }
            return (item, folder)
        }
        guard let (item, folder) = found, validated(folder, item.folder) else { return nil }
        return item.item
    }

    private func validated(_ entry: Entry, _ folder: String) -> Bool {
        guard entry.expires > Self.now() else { return false }
        var status = stat()
        return stat(folder, &status) == 0 && UInt64(status.st_dev) == entry.device && UInt64(status.st_ino) == entry.inode
    }

    func store(_ entry: Entry, for folder: String) {
        state.withLock { state in
            if state.folders.count >= Self.capacity { state.folders.removeAll(keepingCapacity: true) }
            state.folders[folder] = entry
        }
    }

    /// Remembers `item`, resolved from the path `requested` in `folder` (as the path spelled it).
    func storeItem(_ item: ItemPath, for requested: String, inFolder folder: String) {
        state.withLock { state in
            if state.items.count >= Self.capacity { state.items.removeAll(keepingCapacity: true) }
            state.items[requested] = ItemEntry(folder: folder, item: item)
        }
    }
}
