import DocumentKitSystem

/// The validator of a file or folder the index read: which item (device, inode) in which state
/// (size, modification and change times to the nanosecond). An equal stamp means "not changed
/// since it was read"; any difference means "read it again", never "a new document".
struct FileStamp: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modificationTime: Int64
    var changeTime: Int64

    init(device: UInt64, inode: UInt64, size: Int64, modificationTime: Int64, changeTime: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }

    /// The stamp that stands for "none" in a record (no file has this inode and a negative size).
    static let none = FileStamp(device: .max, inode: .max, size: -1, modificationTime: 0, changeTime: 0)

    init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, size: status.size,
            modificationTime: status.modificationTime, changeTime: status.changeTime)
    }
}

/// A non-package folder of the library the index lists: a change of its stamp means its names changed.
struct FolderRecord: Sendable, Hashable {
    var relativePath: String
    var stamp: FileStamp
}
