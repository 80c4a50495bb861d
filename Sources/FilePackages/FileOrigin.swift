#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Synchronization
import SystemPackage

/// The directory a tree was read from, kept open so that members can be read lazily and
/// hard-linked later without going through path strings again.
///
/// The descriptors are few: all the roots of the process keep at most ``TreeRootDescriptors/limit``
/// open between them (a server holds thousands of open documents, each with its root). A root
/// that has not been used for the longest gives its descriptors back when that limit is passed,
/// and opens its directory again by path when next used, if it is still the same directory (its
/// device and inode): a directory replaced or moved away since then counts as gone
/// (`ENOENT`), as a member deleted since it was read does.
package final class TreeRoot: Sendable {
    /// Its path when it was opened, for messages and for opening it again.
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

    struct Open {
        /// The open directory (nil: given back, opened again when needed).
        var directory: Descriptor?
        /// The folders below the root opened so far, by their names from the root: each is
        /// opened once (walking down without following links), not once per member read.
        var folders: [ArraySlice<String>: Descriptor] = [:]
        /// The directory's device and inode, learnt when it first gives its descriptor back.
        var identity: (device: UInt64, inode: UInt64)?
        /// The root can't check it is the same directory when opened again: it keeps its descriptors.
        var keepsDescriptors = false
        /// When it was last used, in ``TreeRootDescriptors``' ticks.
        var lastUse: UInt64 = 0
        /// How many descriptors it holds.
        var count: Int { (directory == nil ? 0 : 1) + folders.count }
    }

    let open: Mutex<Open>
    /// The calls that opened it, and open it again.
    private let fileSystem: FileSystem

    /// At most this many folders are kept open; members of others open their folder each time.
    private static let keptFolderLimit = 64

    package init(directory: Descriptor, path: String, isPackage: Bool, fileSystem: FileSystem = .live) {
        self.path = path
        self.isPackage = isPackage
        self.fileSystem = fileSystem
        self.open = Mutex(Open(directory: directory))
        TreeRootDescriptors.shared.opened(self, count: 1)
    }

    deinit { TreeRootDescriptors.shared.closed(self) }

    /// Calls `body` with the open folder `components` below the root. The folder is opened
    /// once and kept (up to 64 folders; beyond, it is opened and closed around `body`).
    package func withFolder<T>(
        _ components: ArraySlice<String>, using fileSystem: FileSystem, _ body: (CInt) throws(Errno) -> T
    ) throws(Errno) -> T {
        let directory = try currentDirectory(using: fileSystem)
        if components.isEmpty { return try withExtendedLifetime(directory) { () throws(Errno) -> T in try body(directory.rawValue) } }
        if let kept = open.withLock({ $0.folders[components] }) { return try withExtendedLifetime(kept) { () throws(Errno) -> T in try body(kept.rawValue) } }
        let descriptor = Descriptor(owning: try openDirectory(components, from: directory.rawValue, using: fileSystem))
        let kept = open.withLock { open -> Descriptor? in
            if let other = open.folders[components] { return other }
            guard open.folders.count < Self.keptFolderLimit, open.directory != nil else { return nil }
            open.folders[components] = descriptor
            return descriptor
        }
        if kept === descriptor { TreeRootDescriptors.shared.opened(self, count: 1) }
        // The descriptor used is kept by the root, or (not kept) lives until `body` returns.
        return try withExtendedLifetime(descriptor) { () throws(Errno) -> T in try body((kept ?? descriptor).rawValue) }
    }

    /// Whether the root's directory is still the one at its path (a symbolic link there
    /// followed). One that is not was replaced or moved away since it was read: a package a save
    /// exchanged into a version store is a kept version now, and nothing may be hard-linked from
    /// it into a document (a write in place there would change the version).
    package func isStillAtItsPath(using fileSystem: FileSystem) -> Bool {
        guard let directory = try? currentDirectory(using: fileSystem),
            let mine = try? fileSystem.status(of: directory.rawValue, name: path),
            let there = try? fileSystem.status(of: path, in: AT_FDCWD, followingLink: true)
        else { return false }
        return mine.device == there.device && mine.inode == there.inode
    }

    /// The root's directory, opened again (and checked to be the same one) if it was given back.
    private func currentDirectory(using fileSystem: FileSystem) throws(Errno) -> Descriptor {
        let (directory, identity) = open.withLock { open in
            open.lastUse = TreeRootDescriptors.shared.tick()
            return (open.directory, open.identity)
        }
        if let directory { return directory }
        let fd = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
        let reopened = Descriptor(owning: fd)
        let status = try fileSystem.status(of: fd, name: path)
        guard let identity, status.device == identity.device, status.inode == identity.inode else {
            throw .noSuchFileOrDirectory  // another directory by that name now: the one read is gone from there
        }
        let kept = open.withLock { open -> Descriptor in
            if let other = open.directory { return other }
            open.directory = reopened
            return reopened
        }
        if kept === reopened { TreeRootDescriptors.shared.opened(self, count: 1) }
        return kept
    }

    /// Gives the descriptors back, unless one is in use or the directory's identity can't be
    /// learnt; how many it gave back.
    func giveBackDescriptors() -> Int {
        open.withLock { open -> Int in
            guard !open.keepsDescriptors, var directory = open.directory else { return 0 }
            open.directory = nil
            var folders = Array(open.folders)
            open.folders = [:]
            // Referenced elsewhere: a read or a save uses it now (or holds it for its swap).
            var inUse = !isKnownUniquelyReferenced(&directory)
            for index in folders.indices where !inUse { inUse = !isKnownUniquelyReferenced(&folders[index].value) }
            if !inUse && open.identity == nil {
                if let status = try? fileSystem.status(of: directory.rawValue, name: path) {
                    open.identity = (status.device, status.inode)
                } else {
                    open.keepsDescriptors = true
                    inUse = true
                }
            }
            guard !inUse else {
                open.directory = directory
                open.folders = Dictionary(uniqueKeysWithValues: folders)
                return 0
            }
            return 1 + folders.count
        }
    }
}

/// Counts the descriptors every ``TreeRoot`` of the process holds, and makes the roots used least
/// recently give theirs back when there are more than ``limit``.
package final class TreeRootDescriptors: Sendable {
    package static let shared = TreeRootDescriptors()

    /// How many descriptors the roots of the process hold at most between them (more only while in use).
    package static let limit = 128

    private struct State {
        var clock: UInt64 = 0
        var roots: [ObjectIdentifier: (root: Weak, count: Int)] = [:]
        var total = 0
    }

    private struct Weak: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, only read under the lock.
        weak var root: TreeRoot?
    }

    private let state = Mutex(State())

    /// How many descriptors the roots hold now.
    package var count: Int { state.withLock { $0.total } }

    func tick() -> UInt64 {
        state.withLock { state in
            state.clock += 1
            return state.clock
        }
    }

    /// `root` opened `count` more descriptors; roots used least recently give theirs back if
    /// that makes too many.
    func opened(_ root: TreeRoot, count: Int) {
        let candidates = state.withLock { state -> [TreeRoot] in
            state.clock += 1
            let key = ObjectIdentifier(root)
            state.roots[key, default: (Weak(root: root), 0)].count += count
            state.total += count
            guard state.total > Self.limit else { return [] }
            return state.roots.compactMap { $0.key == key ? nil : $0.value.root.root }
        }
        guard !candidates.isEmpty else { return }
        let oldestFirst = candidates.map { ($0, $0.open.withLock { $0.lastUse }) }.sorted { $0.1 < $1.1 }
        for (candidate, _) in oldestFirst {
            guard state.withLock({ $0.total > Self.limit * 3 / 4 }) else { return }
            let given = candidate.giveBackDescriptors()
            if given > 0 { forget(candidate, count: given) }
        }
    }

    private func forget(_ root: TreeRoot, count: Int) {
        state.withLock { state in
            let key = ObjectIdentifier(root)
            guard let entry = state.roots[key] else { return }
            state.total -= min(count, entry.count)
            if entry.count <= count { state.roots.removeValue(forKey: key) } else { state.roots[key]?.count = entry.count - count }
        }
    }

    /// `root` is gone, and its descriptors with it.
    func closed(_ root: TreeRoot) {
        state.withLock { state in
            if let entry = state.roots.removeValue(forKey: ObjectIdentifier(root)) { state.total -= entry.count }
        }
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
