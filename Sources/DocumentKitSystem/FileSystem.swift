#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CDocumentKitShims
import SystemPackage

/// The system calls DocumentKit makes on files, named for fault injection.
public enum SystemCall: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `openat(2)`.
    case open
    /// `mkdirat(2)`.
    case makeDirectory
    /// `linkat(2)`.
    case link
    /// `symlinkat(2)`.
    case symbolicLink
    /// `readlinkat(2)`.
    case readLink
    /// `renameat(2)`, or `renameat2(2)` with `RENAME_NOREPLACE`.
    case rename
    /// `renameat2(2)` with `RENAME_EXCHANGE`.
    case exchange
    /// `unlinkat(2)` of a file.
    case unlink
    /// `unlinkat(2)` of a directory.
    case removeDirectory
    /// `fsync(2)` of a file.
    case synchronize
    /// `fsync(2)` of a directory.
    case synchronizeDirectory
    /// `syncfs(2)`: everything written on a file system.
    case synchronizeFileSystem
    /// `sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE`: a file's writeback started.
    case startWriteback
    /// `fchmod(2)`.
    case changeMode
    /// `fchown(2)`.
    case changeOwner
    /// `fstat(2)` or `fstatat(2)`.
    case status
    /// `write(2)`.
    case write
    /// `pread(2)`.
    case read
    /// `close(2)`.
    case close
    /// `flock(2)`.
    case lock
    /// Listing a directory (`fdopendir`, `readdir`).
    case listDirectory
    /// `utimensat(2)`.
    case setTimes

    public var description: String { rawValue }
}

/// The one seam through which DocumentKit's file operations reach the kernel.
///
/// ``live`` makes the real calls. `DocumentKitTesting` builds instances that fail chosen calls
/// with chosen errors (`EIO`, `ENOSPC`, `EINTR`, ...), so that every step of a save can be
/// tested for what it leaves behind. Every wrapper retries on `EINTR`.
public struct FileSystem: Sendable {
    /// Decides, before a call runs, whether it fails instead: the errno to fail with, or nil.
    package typealias Interceptor = @Sendable (_ call: SystemCall, _ name: String) -> Errno?

    package let interceptor: Interceptor?
    /// When true, `renameat2(RENAME_EXCHANGE)` is treated as unsupported (as on NFS), to exercise
    /// the fallback path.
    package let refusesExchange: Bool

    /// The real system calls.
    public static let live = FileSystem(interceptor: nil)

    package init(interceptor: Interceptor?, refusesExchange: Bool = false) {
        self.interceptor = interceptor
        self.refusesExchange = refusesExchange
    }

    /// Runs `body` unless the interceptor fails the call; retries on EINTR.
    @inline(__always)
    private func perform<T>(_ call: SystemCall, _ name: String, _ body: () -> T, failed: (T) -> Bool)
        throws(Errno) -> T
    {
        while true {
            if let interceptor, let error = interceptor(call, name) {
                if error == .interrupted { continue }
                throw error
            }
            let result = body()
            if failed(result) {
                let error = Errno(rawValue: dk_errno())
                if error == .interrupted { continue }
                throw error
            }
            return result
        }
    }

    @inline(__always)
    private func performVoid(_ call: SystemCall, _ name: String, _ body: () -> CInt) throws(Errno) {
        _ = try perform(call, name, body, failed: { $0 < 0 })
    }

    // MARK: Descriptors

    /// `openat(2)`; `O_CLOEXEC` is always added.
    package func open(_ name: String, in directory: CInt, flags: CInt, mode: mode_t = 0o666) throws(Errno) -> CInt {
        try perform(.open, name, { Glibc.openat(directory, name, flags | O_CLOEXEC, mode) }, failed: { $0 < 0 })
    }

    /// `close(2)`, reporting its error (a deferred write error on some file systems).
    package func close(_ fd: CInt, name: String) throws(Errno) {
        if let interceptor, let error = interceptor(.close, name), error != .interrupted {
            Glibc.close(fd)
            throw error
        }
        // close is not retried on EINTR: on Linux the descriptor is released anyway.
        if Glibc.close(fd) < 0 {
            let error = Errno(rawValue: dk_errno())
            if error != .interrupted { throw error }
        }
    }

    /// `fsync(2)` of a regular file.
    package func synchronize(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.synchronize, name) { Glibc.fsync(fd) }
    }

    /// `fsync(2)` of a directory (makes its entries durable).
    package func synchronizeDirectory(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.synchronizeDirectory, name) { Glibc.fsync(fd) }
    }

    /// `sync_file_range(2)` of the whole of the regular file `fd` with `SYNC_FILE_RANGE_WRITE`:
    /// starts writing its dirty pages to the disk and returns. Nothing is durable by it (no
    /// metadata, no cache flush): a later ``synchronize(_:name:)`` of the file, which then finds
    /// its pages written or on their way, is what makes it so. Files written one after another
    /// and flushed together reach the disk in about the time of one.
    package func startWriteback(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.startWriteback, name) { dk_start_writeback(fd) }
    }

    /// `syncfs(2)` of the file system holding `fd`: every file and directory written there so
    /// far, and their names, reach the disk (one cache flush), not only those of `fd`.
    package func synchronizeFileSystem(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.synchronizeFileSystem, name) { dk_syncfs(fd) }
    }

    /// `fstat(2)`.
    package func status(of fd: CInt, name: String) throws(Errno) -> FileStatus {
        var s = stat()
        try performVoid(.status, name) { Glibc.fstat(fd, &s) }
        return FileStatus(s)
    }

    /// `fstatat(2)` without following a final symbolic link.
    package func status(of name: String, in directory: CInt, followingLink: Bool = false) throws(Errno) -> FileStatus {
        var s = stat()
        let flags = followingLink ? 0 : AT_SYMLINK_NOFOLLOW
        try performVoid(.status, name) { Glibc.fstatat(directory, name, &s, flags) }
        return FileStatus(s)
    }

    /// Writes all of `bytes` (looping over short writes).
    package func write(_ fd: CInt, _ bytes: UnsafeRawBufferPointer, name: String) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try perform(.write, name, {
                Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }, failed: { $0 < 0 })
            offset += written
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns the number read (0 at end of file).
    package func read(_ fd: CInt, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, name: String)
        throws(Errno) -> Int
    {
        try perform(.read, name, { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }, failed: { $0 < 0 })
    }

    /// `fchmod(2)`.
    package func changeMode(_ fd: CInt, to permissions: UInt32, name: String) throws(Errno) {
        try performVoid(.changeMode, name) { Glibc.fchmod(fd, mode_t(permissions)) }
    }

    /// `fchown(2)`.
    package func changeOwner(_ fd: CInt, user: UInt32, group: UInt32, name: String) throws(Errno) {
        try performVoid(.changeOwner, name) { Glibc.fchown(fd, user, group) }
    }

    /// `utimensat(2)` setting the access and modification times to now, not following a link.
    package func setTimesToNow(_ name: String, in directory: CInt) throws(Errno) {
        try performVoid(.setTimes, name) { Glibc.utimensat(directory, name, nil, AT_SYMLINK_NOFOLLOW) }
    }

    /// `utimensat(2)` setting the modification time (nanoseconds since 1970) and leaving the
    /// access time, not following a link.
    package func setModificationTime(_ name: String, in directory: CInt, to nanoseconds: Int64) throws(Errno) {
        var times = (
            timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2),  // UTIME_OMIT
            timespec(tv_sec: time_t(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        )
        try performVoid(.setTimes, name) {
            withUnsafePointer(to: &times) { pointer in
                pointer.withMemoryRebound(to: timespec.self, capacity: 2) { Glibc.utimensat(directory, name, $0, AT_SYMLINK_NOFOLLOW) }
            }
        }
    }

    /// `flock(LOCK_EX | LOCK_NB)`: throws `EWOULDBLOCK` when another open file description holds it.
    package func lockExclusivelyWithoutWaiting(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.lock, name) { dk_flock_exclusive_nonblocking(fd) }
    }

    /// `flock(LOCK_SH)`, waiting for an exclusive holder to let go.
    package func lockShared(_ fd: CInt, name: String) throws(Errno) {
        try performVoid(.lock, name) { dk_flock_shared(fd) }
    }

    // MARK: Names in directories

    /// `mkdirat(2)`.
    package func makeDirectory(_ name: String, in directory: CInt, mode: mode_t = 0o777) throws(Errno) {
        try performVoid(.makeDirectory, name) { Glibc.mkdirat(directory, name, mode) }
    }

    /// `linkat(2)` without following symbolic links.
    package func link(_ name: String, in sourceDirectory: CInt, as newName: String, in directory: CInt) throws(Errno) {
        try performVoid(.link, newName) { Glibc.linkat(sourceDirectory, name, directory, newName, 0) }
    }

    /// `symlinkat(2)`.
    package func makeSymbolicLink(_ name: String, in directory: CInt, pointingTo destination: String) throws(Errno) {
        try performVoid(.symbolicLink, name) { Glibc.symlinkat(destination, directory, name) }
    }

    /// `readlinkat(2)`.
    package func readLink(_ name: String, in directory: CInt) throws(Errno) -> String {
        var capacity = 256
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let count = try perform(.readLink, name, {
                Glibc.readlinkat(directory, name, &buffer, capacity)
            }, failed: { $0 < 0 })
            if count < capacity {
                return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            capacity *= 4
        }
    }

    /// `renameat2(2)` with no flags: replaces `newName` if it exists.
    package func rename(_ name: String, in directory: CInt, to newName: String, in newDirectory: CInt) throws(Errno) {
        try performVoid(.rename, newName) { Glibc.renameat(directory, name, newDirectory, newName) }
    }

    /// `renameat2(2)` with `RENAME_NOREPLACE`: fails with `EEXIST` if `newName` exists.
    /// Where the flag is not supported, throws `EINVAL`.
    package func renameWithoutReplacing(_ name: String, in directory: CInt, to newName: String, in newDirectory: CInt)
        throws(Errno)
    {
        try performVoid(.rename, newName) {
            dk_renameat2(directory, name, newDirectory, newName, DK_RENAME_NOREPLACE)
        }
    }

    /// `renameat2(2)` with `RENAME_EXCHANGE`: swaps two names atomically. Throws `EINVAL`,
    /// `ENOSYS` or `EOPNOTSUPP` where the file system can't do it.
    package func exchange(_ name: String, in directory: CInt, with otherName: String, in otherDirectory: CInt)
        throws(Errno)
    {
        if refusesExchange { throw .invalidArgument }
        try performVoid(.exchange, otherName) {
            dk_renameat2(directory, name, otherDirectory, otherName, DK_RENAME_EXCHANGE)
        }
    }

    /// `unlinkat(2)` of a file or symbolic link.
    package func unlink(_ name: String, in directory: CInt) throws(Errno) {
        try performVoid(.unlink, name) { Glibc.unlinkat(directory, name, 0) }
    }

    /// `unlinkat(2)` with `AT_REMOVEDIR`.
    package func removeDirectory(_ name: String, in directory: CInt) throws(Errno) {
        try performVoid(.removeDirectory, name) { Glibc.unlinkat(directory, name, AT_REMOVEDIR) }
    }

    /// The names in a directory (without `.` and `..`), read from a duplicate of `fd`.
    ///
    /// A name that is not valid UTF-8 comes with its invalid bytes replaced by U+FFFD (and so
    /// names no item), unless `rejectingInvalidUTF8`: the listing then fails with `EILSEQ`.
    package func contentsOfDirectory(_ fd: CInt, name: String, rejectingInvalidUTF8: Bool = false) throws(Errno) -> [String] {
        var names: [String] = []
        try forEachEntry(of: fd, name: name, rejectingInvalidUTF8: rejectingInvalidUTF8) { entryName, _ in names.append(entryName) }
        return names
    }

    /// The entries of a directory (without `.` and `..`) with the kind `readdir` tells (`d_type`),
    /// nil where the file system doesn't tell it: a walk then needs no `stat` per name to find the
    /// folders. Names as ``contentsOfDirectory(_:name:rejectingInvalidUTF8:)`` gives them.
    package func entriesOfDirectory(_ fd: CInt, name: String) throws(Errno) -> [(name: String, kind: FileStatus.Kind?)] {
        var entries: [(name: String, kind: FileStatus.Kind?)] = []
        try forEachEntry(of: fd, name: name, rejectingInvalidUTF8: false) { entryName, entry in
            entries.append((entryName, DirectoryEntry.kind(of: entry)))
        }
        return entries
    }

    /// The entries of a directory (without `.` and `..`) with their inode numbers (`d_ino`):
    /// enough to tell a name that was removed and made again from one unchanged, without a
    /// `stat` per name. Names as ``contentsOfDirectory(_:name:rejectingInvalidUTF8:)`` gives them.
    package func inodesOfDirectory(_ fd: CInt, name: String) throws(Errno) -> [(name: String, inode: UInt64)] {
        var entries: [(name: String, inode: UInt64)] = []
        try forEachEntry(of: fd, name: name, rejectingInvalidUTF8: false) { entryName, entry in
            entries.append((entryName, DirectoryEntry.inode(of: entry)))
        }
        return entries
    }

    /// The names in a directory whose entries have the inode number `inode` (`d_ino`, without a
    /// `stat`: confirm with one, as a union or overlay file system may number differently).
    package func names(ofInode inode: UInt64, inDirectory fd: CInt, name: String) throws(Errno) -> [String] {
        var names: [String] = []
        try forEachEntry(of: fd, name: name, rejectingInvalidUTF8: false) { entryName, entry in
            if DirectoryEntry.inode(of: entry) == inode { names.append(entryName) }
        }
        return names
    }

    private func forEachEntry(
        of fd: CInt, name: String, rejectingInvalidUTF8: Bool, _ body: (String, UnsafePointer<dirent>) -> Void
    ) throws(Errno) {
        let copy = try perform(.listDirectory, name, { Glibc.fcntl(fd, F_DUPFD_CLOEXEC, 0) }, failed: { $0 < 0 })
        guard let stream = Glibc.fdopendir(copy) else {
            let error = Errno(rawValue: dk_errno())
            Glibc.close(copy)
            throw error
        }
        defer { Glibc.closedir(stream) }
        Glibc.rewinddir(stream)
        while true {
            dk_set_errno(0)
            guard let entry = Glibc.readdir(stream) else {
                let error = dk_errno()
                if error != 0 { throw Errno(rawValue: error) }
                return
            }
            // Through a pointer into the record: copying `d_name` (a 256-byte field) can run off
            // the end of readdir's buffer, as a record is only as long as its name.
            let entryName = rejectingInvalidUTF8 ? DirectoryEntry.validatedName(of: entry) : DirectoryEntry.name(of: entry)
            guard let entryName else { throw .illegalByteSequence }
            if !entryName.isEmpty && entryName != "." && entryName != ".." { body(entryName, entry) }
        }
    }
}
