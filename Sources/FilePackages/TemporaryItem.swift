#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage

/// Creates a save's temporary items so that no sweep of the folder (``InterruptedSaveRecovery``,
/// run by every open and save there, in every process) can take one for litter, from its first
/// instant.
///
/// A temporary item is litter when nobody holds its lock, but a new item has a name before it
/// can be locked: a sweep that came between `mkdir` and `flock` used to remove a sibling save's
/// fresh tree, or to hold its lock for a moment so that the sibling's own `flock` failed
/// (`EAGAIN`). So an item is born under a name of its own, `.NAME.dk-born-RANDOM`, which sweeps
/// leave alone while it is young, is locked there, and only then renamed to the name of its
/// purpose (`new`, `tmp`…): every item under such a name is locked by its owner from the first
/// instant it bears it. A process killed in the few instructions between birth and lock leaves a
/// born item that sweeps remove once it is older than ``bornItemGracePeriod`` (save protocol v2).
package enum TemporaryItem {
    /// The purpose of an item that is being created and not yet locked.
    package static let bornPurpose = "born"

    /// How old an unlocked born item must be to be taken for litter: far longer than the few
    /// system calls between its creation and its lock.
    package static let bornItemGracePeriod: Int64 = 60 * 1_000_000_000

    /// A new directory `.NAME.dk-PURPOSE-RANDOM` in `parent`, locked, open: its name and descriptor.
    package static func makeLockedDirectory(
        for name: String, purpose: String, in parent: CInt, mode: mode_t, using fileSystem: FileSystem
    ) throws(TemporaryItemError) -> (name: String, descriptor: CInt) {
        let suffix = TemporaryName.randomSuffix()
        let born = TemporaryName.prefix(for: name) + bornPurpose + "-" + suffix
        do { try fileSystem.makeDirectory(born, in: parent, mode: mode) } catch {
            throw TemporaryItemError(errno: error, name: born, step: "creating")
        }
        let fd: CInt
        do { fd = try fileSystem.open(born, in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
            _ = try? fileSystem.removeDirectory(born, in: parent)
            throw TemporaryItemError(errno: error, name: born, step: "opening")
        }
        return try lockAndName(fd, born: born, for: name, purpose: purpose, suffix: suffix, in: parent, using: fileSystem) {
            _ = try? fileSystem.removeDirectory(born, in: parent)
        }
    }

    /// A new, empty regular file `.NAME.dk-PURPOSE-RANDOM` in `parent`, locked and open for
    /// writing (`flags` are added to `O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW`).
    package static func makeLockedFile(
        for name: String, purpose: String, in parent: CInt, mode: mode_t, using fileSystem: FileSystem
    ) throws(TemporaryItemError) -> (name: String, descriptor: CInt) {
        let suffix = TemporaryName.randomSuffix()
        let born = TemporaryName.prefix(for: name) + bornPurpose + "-" + suffix
        let fd: CInt
        do { fd = try fileSystem.open(born, in: parent, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode) } catch {
            throw TemporaryItemError(errno: error, name: born, step: "creating")
        }
        return try lockAndName(fd, born: born, for: name, purpose: purpose, suffix: suffix, in: parent, using: fileSystem) {
            _ = try? fileSystem.unlink(born, in: parent)
        }
    }

    private static func lockAndName(
        _ fd: CInt, born: String, for name: String, purpose: String, suffix: String, in parent: CInt,
        using fileSystem: FileSystem, undo: () -> Void
    ) throws(TemporaryItemError) -> (name: String, descriptor: CInt) {
        let final = TemporaryName.prefix(for: name) + purpose + "-" + suffix
        do {
            try fileSystem.lockExclusivelyWithoutWaiting(fd, name: born)
        } catch {
            Glibc.close(fd)
            undo()
            throw TemporaryItemError(errno: error, name: born, step: "locking")
        }
        do {
            try fileSystem.rename(born, in: parent, to: final, in: parent)
        } catch {
            Glibc.close(fd)
            undo()
            throw TemporaryItemError(errno: error, name: born, step: "naming")
        }
        return (final, fd)
    }
}

/// Why ``TemporaryItem`` could not make a temporary item: the system's error, the name and the step.
package struct TemporaryItemError: Error {
    package let errno: Errno
    package let name: String
    /// "creating", "opening", "locking" or "naming".
    package let step: String
}
