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

    init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, size: status.size,
            modificationTime: status.modificationTime, changeTime: status.changeTime)
    }
}

/// An entry with the validators it was read under.
struct EntryRecord: Sendable, Hashable {
    /// The entry.
    var entry: IndexEntry
    /// The package folder's stamp: a member renamed into it (a sync engine's delivery) or an
    /// atomic swap of the whole package changes it.
    var package: FileStamp
    /// The manifest's stamp, nil when there was none: an in-place edit changes it.
    var manifest: FileStamp?
    /// The stamp of the document's folder in the version store, nil when it has none.
    var conflicts: FileStamp?
}

/// A non-package folder of the library the index lists: a change of its stamp means its names changed.
struct FolderRecord: Sendable, Hashable {
    var relativePath: String
    var stamp: FileStamp
}
