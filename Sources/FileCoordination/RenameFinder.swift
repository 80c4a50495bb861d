#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem

/// Finds where an item went when a program that does not coordinate (`mv`, a sync engine)
/// renamed it while a coordination waited: the same file (device and inode) under another name
/// in the folder it was in.
///
/// Only renames inside one folder are found this way (the common case: renaming a document in
/// its library); an item moved to another folder by a program that does not coordinate reads as
/// deleted (``FileAccessIntent/itemWasDeletedWhileWaiting``).
enum RenameFinder {
    /// The path of the entry of `folder` that is the file (`device`, `inode`), if any.
    static func find(device: UInt64, inode: UInt64, in folder: String) -> String? {
        guard let stream = opendir(folder) else { return nil }
        defer { closedir(stream) }
        let prefix = folder == "/" ? "" : folder
        while let entry = readdir(stream) {
            guard DirectoryEntry.inode(of: entry) == inode else { continue }
            let name = DirectoryEntry.name(of: entry)
            guard name != ".", name != ".." else { continue }
            // d_ino alone can name a file of a mount point's other device: confirm with lstat.
            let path = prefix + "/" + name
            var status = stat()
            if lstat(path, &status) == 0, UInt64(status.st_dev) == device, UInt64(status.st_ino) == inode { return path }
        }
        return nil
    }
}
