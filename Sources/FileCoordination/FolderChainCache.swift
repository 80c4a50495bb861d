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

    private let entries = Mutex<[String: Entry]>([:])
    private static let lifetime: UInt64 = 1_000_000_000
    private static let capacity = 4_096

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The entry for `folder` if it is still valid.
    func lookup(_ folder: String) -> Entry? {
        guard let entry = entries.withLock({ $0[folder] }), entry.expires > Self.now() else { return nil }
        var status = stat()
        guard stat(folder, &status) == 0, UInt64(status.st_dev) == entry.device, UInt64(status.st_ino) == entry.inode else {
            return nil
        }
        return entry
    }

    func store(_ entry: Entry, for folder: String) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[folder] = entry
        }
    }
}
