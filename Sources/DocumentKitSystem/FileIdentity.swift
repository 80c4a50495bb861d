#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The identity of a file as it was when it was looked at: which file (device and inode) and
/// which state of it (size, modification and change times, to the nanosecond).
///
/// Two identities are equal when they describe the same file in the same state. DocumentKit's
/// saves never modify a file in place, so an unchanged identity means unchanged contents.
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The device the file lives on.
    public var device: UInt64
    /// The inode number of the file on its device.
    public var inode: UInt64
    /// The size in bytes.
    public var size: Int64
    /// The last modification of the contents, in nanoseconds since 1970.
    public var modificationTime: Int64
    /// The last change of the inode (contents, links, mode, owner), in nanoseconds since 1970;
    /// nil when it is not known (after DocumentKit itself added or removed hard links to the file).
    public var changeTime: Int64?

    /// Makes an identity from its parts.
    public init(device: UInt64, inode: UInt64, size: Int64, modificationTime: Int64, changeTime: Int64?) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }

    /// The identity described by a `stat` result.
    public init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, size: status.size,
            modificationTime: status.modificationTime, changeTime: status.changeTime)
    }

    /// Whether `other` is the same file in the same state: same device, inode, size and
    /// modification time, and the same change time where both know it.
    ///
    /// This is the "unchanged since read" test. The change time catches a rewrite in place that
    /// restored the modification time; it is left out only where DocumentKit's own hard links
    /// moved it (see ``changeTime``).
    public func isUnchanged(comparedTo other: FileIdentity) -> Bool {
        guard device == other.device, inode == other.inode, size == other.size,
            modificationTime == other.modificationTime
        else { return false }
        if let changeTime, let otherChangeTime = other.changeTime { return changeTime == otherChangeTime }
        return true
    }

    /// The same identity with the change time marked unknown.
    public var withoutChangeTime: FileIdentity {
        var copy = self
        copy.changeTime = nil
        return copy
    }

    public var description: String {
        "dev \(device) ino \(inode) size \(size) mtime \(modificationTime) ctime \(changeTime.map(String.init) ?? "?")"
    }
}

/// What `stat` says about a file, in the parts DocumentKit uses.
public struct FileStatus: Sendable, Hashable {
    /// The kind of file.
    public enum Kind: Sendable, Hashable {
        case regular, directory, symbolicLink, fifo, characterDevice, blockDevice, socket, unknown
    }

    /// The kind of file.
    public var kind: Kind
    /// The device the file lives on.
    public var device: UInt64
    /// The inode number on that device.
    public var inode: UInt64
    /// The size in bytes.
    public var size: Int64
    /// Permission bits, including set-user-ID, set-group-ID and sticky (`mode & 0o7777`).
    public var permissions: UInt32
    /// The number of hard links (names) the file has.
    public var linkCount: UInt64
    /// The owner's user ID.
    public var userID: UInt32
    /// The group ID.
    public var groupID: UInt32
    /// Nanoseconds since 1970.
    public var modificationTime: Int64
    /// Nanoseconds since 1970.
    public var changeTime: Int64

    /// Converts a C `stat` record.
    public init(_ s: stat) {
        switch s.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFSOCK: kind = .socket
        default: kind = .unknown
        }
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        permissions = UInt32(s.st_mode & 0o7777)
        linkCount = UInt64(s.st_nlink)
        userID = s.st_uid
        groupID = s.st_gid
        modificationTime = Self.nanoseconds(s.st_mtim)
        changeTime = Self.nanoseconds(s.st_ctim)
    }

    /// A file time in nanoseconds since 1970, saturated to `Int64`'s range: a file stamped
    /// before 1677 or after 2262 (`touch -d 2300-01-01`, allowed by ext4) must not trap.
    package static func nanoseconds(_ time: timespec) -> Int64 {
        let (scaled, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return time.tv_sec < 0 ? .min : .max }
        let (sum, overflowed) = scaled.addingReportingOverflow(Int64(time.tv_nsec))
        return overflowed ? .max : sum
    }

    /// The identity of the file in this state.
    public var identity: FileIdentity { FileIdentity(self) }
}
