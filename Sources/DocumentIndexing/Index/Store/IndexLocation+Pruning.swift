#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem

extension IndexLocation {
    /// How long an index file that no process opened is kept: 30 days. Its library was deleted,
    /// moved (a new identity, so a new file) or not used since; an index is a cache, made again
    /// by a scan when needed.
    static let retention: Duration = .seconds(30 * 24 * 3600)

    /// Marks the index file at `path` as used now (its modification time, which pruning reads).
    static func markUsed(_ path: String, using fileSystem: FileSystem) {
        try? fileSystem.setTimesToNow(path, in: AT_FDCWD)
    }

    /// Removes the index files in `folder` not modified for `age`, other than `keeping`, with their
    /// `-wal` and `-shm` files; returns their names. Done when an index file is made: the folder
    /// gains a file only then, so it never holds more than the libraries used within `age`.
    ///
    /// A process that opened one of them in the same instant (after the listing, before the
    /// removal) keeps working on a file no longer in the folder: what it writes there is lost to
    /// the next process, which scans the library again. A cache may lose that; nothing else reads it.
    @discardableResult
    static func prune(folder: String, keeping: String, olderThan age: Duration, using fileSystem: FileSystem) -> [String] {
        guard let fd = try? fileSystem.open(folder, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) else { return [] }
        let directory = Descriptor(owning: fd)
        guard let names = try? fileSystem.contentsOfDirectory(directory.rawValue, name: folder) else { return [] }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let limit = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - Int64(age.components.seconds) * 1_000_000_000
        var removed: [String] = []
        for name in names where name.hasSuffix(".sqlite") && name != keeping {
            guard let status = try? fileSystem.status(of: name, in: directory.rawValue), status.kind == .regular,
                status.modificationTime < limit
            else { continue }
            for suffix in ["", "-wal", "-shm", "-journal"] { try? fileSystem.unlink(name + suffix, in: directory.rawValue) }
            removed.append(name)
        }
        return removed
    }
}
