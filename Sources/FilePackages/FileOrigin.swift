#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Synchronization
import SystemPackage

/// The directory a tree was read from, kept open so that members can be read lazily and
/// hard-linked later without going through path strings again.
package final class TreeRoot: Sendable {
    /// The open directory: the package itself, or the parent directory of a single file.
    package let directory: Descriptor
    /// Its path when it was opened, for messages.
    package let path: String
    /// Whether the members are part of a package (so a save may hard-link them into the next
    /// version of that package). A file that was read on its own is copied instead, because
    /// another program may rewrite it in place.
    package let isPackage: Bool

    /// The folder name of a version store (`VersionStore.folderName`).
    package static let versionStoreFolderName = ".documentkit-versions"

    /// Whether `path` is inside a version store.
    package static func isInsideVersionStore(_ path: String) -> Bool {
        path.split(separator: "/").contains { $0 == versionStoreFolderName }
    }

    package init(directory: Descriptor, path: String, isPackage: Bool) {
        self.directory = directory
        self.path = path
        self.isPackage = isPackage
    }

    /// The folders below the root opened so far, by their names from the root: each is opened
    /// once (walking down without following links), not once per member read.
    private let folders = Mutex<[ArraySlice<String>: Descriptor]>([:])
    /// At most this many folders are kept open; members of others open their folder each time.
    private static let keptFolderLimit = 64

    /// Calls `body` with the open folder `components` below the root. The folder is opened
    /// once and kept (up to 64 folders; beyond, it is opened and closed around `body`).
    package func withFolder<T>(
        _ components: ArraySlice<String>, using fileSystem: FileSystem, _ body: (CInt) throws(Errno) -> T
    ) throws(Errno) -> T {
        if components.isEmpty { return try body(directory.rawValue) }
        if let kept = folders.withLock({ $0[components] }) { return try body(kept.rawValue) }
        let descriptor = Descriptor(owning: try openDirectory(components, from: directory.rawValue, using: fileSystem))
        let kept = folders.withLock { folders -> Descriptor? in
            if let other = folders[components] { return other }
            guard folders.count < Self.keptFolderLimit else { return nil }
            folders[components] = descriptor
            return descriptor
        }
        // The descriptor used is kept by the root, or (not kept) lives until `body` returns.
        return try withExtendedLifetime(descriptor) { () throws(Errno) -> T in try body((kept ?? descriptor).rawValue) }
    }
}

/// Where a regular file's contents came from: the root it was read through, its path inside
/// that root, and the identity of the file at the time.
package struct FileOrigin: Sendable {
    package let root: TreeRoot
    /// The names of the folders from the root down to the file's folder, for example
    /// `["attachments"]`: one array shared by the members of a folder, not one per member.
    package let folder: [String]
    /// The file's name in its folder.
    package let name: String
    package let identity: FileIdentity
    /// The permission bits the file had.
    package let permissions: UInt32

    package init(root: TreeRoot, folder: [String], name: String, identity: FileIdentity, permissions: UInt32) {
        self.root = root
        self.folder = folder
        self.name = name
        self.identity = identity
        self.permissions = permissions
    }

    /// An origin at `components` (the folders' names, then the file's) below `root`.
    package init(root: TreeRoot, components: [String], identity: FileIdentity, permissions: UInt32) {
        self.init(root: root, folder: Array(components.dropLast()), name: components.last ?? "", identity: identity, permissions: permissions)
    }

    /// The names from the root down to the file, for example `["attachments", "photo.jpg"]`.
    package var components: [String] { folder + [name] }

    package var relativePath: String { components.joined(separator: "/") }
    package var displayPath: String { root.path == "/" ? "/" + relativePath : root.path + "/" + relativePath }

    /// Opens the directory that holds the file, walking down from the root without following
    /// any symbolic link (once per folder: see ``parentDirectory(using:)``). The caller owns the
    /// returned descriptor.
    package func openParentDirectory(using fileSystem: FileSystem) throws(Errno) -> CInt {
        try withParentDirectory(using: fileSystem) { directory throws(Errno) in
            try fileSystem.open(".", in: directory, flags: O_RDONLY | O_DIRECTORY)
        }
    }

    /// Calls `body` with the directory that holds the file, opened once per folder of the tree
    /// and kept by the root (`body` must not close it): reading 10,000 members of one folder
    /// opens it once, not 10,000 times.
    package func withParentDirectory<T>(using fileSystem: FileSystem, _ body: (CInt) throws(Errno) -> T) throws(Errno) -> T {
        try root.withFolder(folder[...], using: fileSystem, body)
    }
}

/// Opens `components` below `start` one level at a time with `O_NOFOLLOW`, so that a symbolic
/// link on the way fails (`ELOOP`/`ENOTDIR`) instead of leading elsewhere. The caller owns the result.
package func openDirectory(_ components: ArraySlice<String>, from start: CInt, using fileSystem: FileSystem)
    throws(Errno) -> CInt
{
    var current = try fileSystem.open(".", in: start, flags: O_RDONLY | O_DIRECTORY)
    for name in components {
        do {
            let next = try fileSystem.open(name, in: current, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            Glibc.close(current)
            current = next
        } catch {
            Glibc.close(current)
            throw error
        }
    }
    return current
}
