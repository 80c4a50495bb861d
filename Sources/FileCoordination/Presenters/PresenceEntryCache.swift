#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Foundation
import Synchronization

/// The entries of the unit folders in `presenters/`, listed once and reused while a folder is
/// unchanged: one `stat` instead of `open`, `getdents` and `close` per coordination.
///
/// A listing is reused while the folder's inode and modification time (to the nanosecond) are
/// the same. It is kept only if that time is at least ``settled`` old: the kernel stamps times
/// from a clock that advances in ticks (up to 10 ms), so a change made in the same tick as the
/// last one could leave the time as it was; once the tick is over, any change gets a later time
/// (git's rule for "racily clean" files).
final class PresenceEntryCache: Sendable {
    /// A folder's names, and the folder's identity and modification time when it was listed.
    private struct Listing {
        let inode: UInt64
        let modified: timespec
        let names: [String]
    }

    /// How old a folder's modification time must be for its listing to be kept.
    static let settled: Int64 = 50_000_000
    /// How many listings are kept (all are dropped when full).
    private static let capacity = 1_024

    /// Listings by folder path.
    private let listings = Mutex<[String: Listing]>([:])

    /// The sorted names in `folder`; nil if it does not exist (nobody presents the unit: one failed `stat`).
    func names(in folder: String) -> [String]? {
        var status = stat()
        guard stat(folder, &status) == 0 else { return nil }
        if let listing = listings.withLock({ $0[folder] }), listing.inode == UInt64(status.st_ino),
            listing.modified.tv_sec == status.st_mtim.tv_sec, listing.modified.tv_nsec == status.st_mtim.tv_nsec
        {
            return listing.names
        }
        guard let names = Self.list(folder)?.sorted() else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let age = (Int64(now.tv_sec) - Int64(status.st_mtim.tv_sec)) * 1_000_000_000 + Int64(now.tv_nsec) - Int64(status.st_mtim.tv_nsec)
        if age >= Self.settled {
            let listing = Listing(inode: UInt64(status.st_ino), modified: status.st_mtim, names: names)
            listings.withLock { listings in
                if listings.count >= Self.capacity { listings.removeAll(keepingCapacity: true) }
                listings[folder] = listing
            }
        }
        return names
    }

    /// The names in `folder` not starting with `.`; nil if it cannot be listed.
    private static func list(_ folder: String) -> [String]? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 8_192) { buffer -> [String]? in
            let used = Int(dk_list_names(folder, buffer.baseAddress, Int32(buffer.count)))
            guard used >= 0 else {
                guard errno == ERANGE else { return nil }
                return (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { !$0.hasPrefix(".") }
            }
            var names: [String] = []
            var start = 0
            while start < used {
                let name = String(cString: buffer.baseAddress! + start)
                names.append(name)
                start += name.utf8.count + 1
            }
            return names
        }
    }
}
