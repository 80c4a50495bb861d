#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads the parts of a `readdir(3)` record safely.
///
/// A record is only as long as its name (`d_reclen` bytes), not `MemoryLayout<dirent>.size`:
/// copying `entry.pointee` or its fixed 256-byte `d_name` field can read past the end of the
/// buffer readdir fills, and crash when that buffer ends a mapped page. Names are read through a
/// pointer into the record instead, bounded by `d_reclen`.
package enum DirectoryEntry {
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    private static let lengthOffset = MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!

    /// The bytes of the entry's name (without its terminating NUL).
    package static func withNameBytes<R>(
        of entry: UnsafePointer<dirent>, _ body: (UnsafeBufferPointer<UInt8>) throws -> R
    ) rethrows -> R {
        let record = UnsafeRawPointer(entry)
        let recordLength = Int(record.load(fromByteOffset: lengthOffset, as: UInt16.self))
        let limit = max(0, recordLength - nameOffset)
        let start = (record + nameOffset).assumingMemoryBound(to: UInt8.self)
        var length = 0
        while length < limit && start[length] != 0 { length += 1 }
        return try body(UnsafeBufferPointer(start: start, count: length))
    }

    /// The entry's name; invalid UTF-8 is replaced by U+FFFD.
    package static func name(of entry: UnsafePointer<dirent>) -> String {
        withNameBytes(of: entry) { String(decoding: $0, as: UTF8.self) }
    }

    /// The entry's name, or nil if it is not valid UTF-8.
    package static func validatedName(of entry: UnsafePointer<dirent>) -> String? {
        withNameBytes(of: entry) { String(validating: $0, as: UTF8.self) }
    }

    /// The kind of file the record names (`d_type`), nil when the file system doesn't say (`DT_UNKNOWN`).
    package static func kind(of entry: UnsafePointer<dirent>) -> FileStatus.Kind? {
        let type = UnsafeRawPointer(entry).load(fromByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_type)!, as: UInt8.self)
        switch Int32(type) {
        case Int32(DT_REG): return .regular
        case Int32(DT_DIR): return .directory
        case Int32(DT_LNK): return .symbolicLink
        case Int32(DT_FIFO): return .fifo
        case Int32(DT_CHR): return .characterDevice
        case Int32(DT_BLK): return .blockDevice
        case Int32(DT_SOCK): return .socket
        default: return nil
        }
    }

    /// The entry's inode number (`d_ino`).
    package static func inode(of entry: UnsafePointer<dirent>) -> UInt64 {
        UInt64(UnsafeRawPointer(entry).load(fromByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_ino)!, as: ino_t.self))
    }
}

/// Limits that keep walks of file trees bounded whatever is on disk.
package enum TreeLimits {
    /// How many levels of folders a package may nest (see `FileWrapper.maximumDepth`); folder
    /// walks that don't read packages (presenters' trees, conflict-copy searches) stop there too.
    package static let maximumDepth = 256
}
