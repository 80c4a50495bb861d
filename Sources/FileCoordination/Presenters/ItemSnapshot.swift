#if canImport(Glibc)
import Glibc
#endif
import Foundation
import DocumentKitSystem

/// What a presented item looked like on disk, to tell real changes from repeated events.
struct ItemSnapshot: Sendable, Equatable {
    var exists = false
    var isDirectory = false
    var device: UInt64 = 0
    var inode: UInt64 = 0
    /// Size, times and (for a package) every member's name and identity, folded into one value.
    var fingerprint: Int = 0

    /// Whether `other` is the same file or folder (perhaps changed): both exist, with one identity.
    func isSameItem(as other: ItemSnapshot) -> Bool { exists && other.exists && inode == other.inode && device == other.device }

    /// One entry of a presented folder.
    struct Child: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var isDirectory: Bool
        var fingerprint: Int

        /// Whether `other` is the same file or folder (perhaps changed, perhaps renamed).
        func isSameItem(as other: Child) -> Bool { inode == other.inode && device == other.device }
    }

    /// How much of an item its fingerprint covers.
    enum Depth: Sendable {
        /// A file, or a package: everything in it.
        case contents
        /// A plain folder: only which folder it is (what happens inside is reported as subitems).
        case identity
    }

    /// Reads the item at `path`.
    static func read(_ path: String, depth: Depth) -> ItemSnapshot {
        var status = stat()
        guard lstat(path, &status) == 0 else { return ItemSnapshot() }
        var snapshot = ItemSnapshot(
            exists: true, isDirectory: (status.st_mode & S_IFMT) == S_IFDIR, device: UInt64(status.st_dev),
            inode: UInt64(status.st_ino))
        var hasher = Hasher()
        if snapshot.isDirectory && depth == .identity {
            hasher.combine(snapshot.device)
            hasher.combine(snapshot.inode)
        } else if snapshot.isDirectory {
            combine(status, into: &hasher, changeTime: false)
            fingerprintTree(path, into: &hasher, depth: 0)
        } else {
            combine(status, into: &hasher)
        }
        snapshot.fingerprint = hasher.finalize()
        return snapshot
    }

    /// The entry at `path` (a package, by `isPackage`, fingerprinted whole), if it exists.
    static func child(at path: String, isPackage: Bool) -> Child? {
        let item = read(path, depth: isPackage ? .contents : .identity)
        guard item.exists else { return nil }
        return Child(device: item.device, inode: item.inode, isDirectory: item.isDirectory, fingerprint: item.fingerprint)
    }

    /// The names in the folder at `path` (without `.` and `..`), or nil if it cannot be listed.
    static func names(in path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = DirectoryEntry.name(of: entry)
            if !name.isEmpty && name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// DocumentKit's own temporary items (`.NAME.dk-…`) are not subitems anyone presents.
    static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") && name.contains(".dk-") }

    /// Folds a file's identity, size, mode and times in. The change time counts only for an
    /// item on its own: a package member's change time also moves when a save adds or removes a
    /// hard link to it (saves share unchanged members), which is no change of the document.
    private static func combine(_ status: stat, into hasher: inout Hasher, changeTime: Bool = true) {
        hasher.combine(UInt64(status.st_dev))
        hasher.combine(UInt64(status.st_ino))
        hasher.combine(Int64(status.st_size))
        hasher.combine(Int(status.st_mtim.tv_sec))
        hasher.combine(Int(status.st_mtim.tv_nsec))
        if changeTime {
            hasher.combine(Int(status.st_ctim.tv_sec))
            hasher.combine(Int(status.st_ctim.tv_nsec))
        }
        hasher.combine(UInt32(status.st_mode))
    }

    private static func fingerprintTree(_ path: String, into hasher: inout Hasher, depth: Int) {
        guard depth < 32, let names = names(in: path) else { return }
        for name in names.sorted() {
            var status = stat()
            let child = path + "/" + name
            guard lstat(child, &status) == 0 else { continue }
            hasher.combine(name)
            combine(status, into: &hasher, changeTime: false)
            if (status.st_mode & S_IFMT) == S_IFDIR { fingerprintTree(child, into: &hasher, depth: depth + 1) }
        }
    }
}
