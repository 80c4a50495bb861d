#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Logging
import Synchronization

/// Builds a new tree inside a temporary directory: unchanged members read from a package are
/// hard-linked, everything else is written (and flushed, for a durable save).
struct PackageBuilder {
    let fileSystem: FileSystem
    let durable: Bool
    let documentPath: String
    /// The new tree's root, used as the origin of the members of the returned wrapper.
    let newRoot: TreeRoot
    /// The owner and group new members get, when the package belongs to someone other than this
    /// process (a save by root keeps a user's package theirs); nil to keep the process's own.
    var owner: (user: UInt32, group: UInt32)?
    /// The package being replaced (an open folder), if any: a member written anew without a
    /// mode of its own keeps the mode its predecessor at the same path had (0600, 0444...).
    var replacedTree: CInt?
    /// Open source directories for hard links, keyed by root and relative path.
    private var sourceDirectories: [SourceKey: Descriptor] = [:]
    /// The source directory used last (owned by `sourceDirectories`).
    private var lastSource: (key: SourceKey, fd: CInt)?
    /// The roots members were linked from, by whether each is still the directory at its path
    /// (``TreeRoot/isStillAtItsPath(using:)``): asked once per root and save.
    private var rootsInPlace: [ObjectIdentifier: Bool] = [:]

    private struct SourceKey: Hashable {
        let root: ObjectIdentifier
        let path: ArraySlice<String>
    }

    init(fileSystem: FileSystem, durable: Bool, documentPath: String, newRoot: TreeRoot) {
        self.fileSystem = fileSystem
        self.durable = durable
        self.documentPath = documentPath
        self.newRoot = newRoot
    }

    private func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
        DocumentKitError(errno, operation: .save, path: documentPath, step: step, originalIsIntact: true)
    }

    /// Writes `children` into the open directory `directory` (at `components` below the new root)
    /// and returns them as they now are on disk.
    ///
    /// A durable build flushes the files it writes together, each with or before its folder, and
    /// all before it returns: each one's writeback is started as it is written
    /// (``DocumentKitSystem/FileSystem/startWriteback(_:name:)``) and the `fsync`s come after, at
    /// most ``PendingFlushes/limit`` files held open at a time; `extra` (the caller's root folder,
    /// say) is flushed with its last files, all at once (``PendingFlushes/flushAll(with:)``).
    mutating func build(
        _ children: [String: FileWrapper], into directory: CInt, at components: [String],
        alsoFlushing extra: [(item: FileSystem.FlushItem, step: String)] = []
    ) throws(DocumentKitError) -> [String: FileWrapper] {
        var pending = PendingFlushes(fileSystem: fileSystem, documentPath: documentPath)
        defer { pending.closeAll() }
        let result = try build(children, into: directory, at: components, flushing: &pending)
        try pending.flushAll(with: durable ? extra : [])
        return result
    }

    /// ``build(_:into:at:)`` holding the files written and not flushed yet in `pending`, one
    /// bound for the whole tree: a folder is flushed with every file held (its own, and its
    /// parents' written before it), so a package nested deep holds no more open files than a flat one.
    private mutating func build(
        _ children: [String: FileWrapper], into directory: CInt, at components: [String], flushing pending: inout PendingFlushes
    ) throws(DocumentKitError) -> [String: FileWrapper] {
        var result: [String: FileWrapper] = [:]
        result.reserveCapacity(children.count)
        for index in Self.linkingOrder(children) {
            let (name, child) = children[index]
            try Self.validate(name: name, in: documentPath)
            var memberComponents: [String] { components + [name] }
            var memberPath: String { memberComponents.joined(separator: "/") }
            switch child.storage {
            case .directory(let grandchildren):
                result[name] = try buildDirectory(
                    name, grandchildren, permissions: child.permissions ?? replacedPermissions(at: memberComponents, kind: .directory),
                    in: directory, at: memberComponents, flushing: &pending)
            case .symbolicLink(let destination):
                do { try fileSystem.makeSymbolicLink(name, in: directory, pointingTo: destination) } catch {
                    throw fail(error, "creating the symbolic link “\(memberPath)”")
                }
                result[name] = child
            case .data(let data):
                result[name] = try write(
                    data, as: name, permissions: child.permissions ?? replacedPermissions(at: memberComponents, kind: .regular),
                    in: directory, at: memberComponents, flushing: &pending)
            case .provided(let provided):
                let data: Data
                do { data = try provided.data() } catch {
                    var error = error
                    error.operation = .save
                    error.path = documentPath
                    error.step = "producing the member “\(memberPath)”"
                    error.originalIsIntact = true
                    throw error
                }
                result[name] = try write(
                    data, as: name, permissions: child.permissions ?? replacedPermissions(at: memberComponents, kind: .regular),
                    in: directory, at: memberComponents, flushing: &pending)
            case .lazy(let lazy):
                if let linked = try link(lazy, as: name, permissions: child.permissions, in: directory, folder: components) {
                    result[name] = linked
                } else {
                    // Copied in pieces from where it was read: a large file costs no memory.
                    let written = try copy(
                        lazy, as: name, permissions: child.permissions ?? lazy.origin.permissions, in: directory,
                        at: memberComponents, flushing: &pending)
                    if let origin = written.origin { lazy.recordCopy(at: origin) }
                    result[name] = written
                }
            }
        }
        return result
    }

    /// The members in the order of the inode numbers of the files they were read from (members
    /// that were not read from a file first). Hard links made in inode order update the inode
    /// table sequentially: for 10,000 members that is markedly cheaper in the kernel than the
    /// dictionary's hash order.
    private static func linkingOrder(_ children: [String: FileWrapper]) -> [Dictionary<String, FileWrapper>.Index] {
        var keyed: [(inode: UInt64, index: Dictionary<String, FileWrapper>.Index)] = []
        keyed.reserveCapacity(children.count)
        var index = children.startIndex
        while index != children.endIndex {
            let inode: UInt64
            if case .lazy(let lazy) = children.values[index].storage { inode = lazy.origin.identity.inode } else { inode = 0 }
            keyed.append((inode, index))
            children.formIndex(after: &index)
        }
        keyed.sort { $0.inode < $1.inode }
        return keyed.map(\.index)
    }

    private mutating func buildDirectory(
        _ name: String, _ children: [String: FileWrapper], permissions: UInt32?, in directory: CInt, at components: [String],
        flushing pending: inout PendingFlushes
    ) throws(DocumentKitError) -> FileWrapper {
        let memberPath = components.joined(separator: "/")
        guard components.count <= FileWrapper.maximumDepth else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: documentPath, originalIsIntact: true,
                detail: "The tree is nested deeper than \(FileWrapper.maximumDepth) levels "
                    + "(at “\(components.prefix(3).joined(separator: "/"))/…”): a package may not be.")
        }
        let fd: CInt
        do {
            try fileSystem.makeDirectory(name, in: directory, mode: mode_t(permissions ?? 0o777))
            fd = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        } catch { throw fail(error, "creating the folder “\(memberPath)”") }
        defer { Glibc.close(fd) }
        do {
            try giveOwner(fd, memberPath)
            if let permissions { try fileSystem.changeMode(fd, to: permissions, name: memberPath) }
        } catch {
            throw fail(error, "setting the owner and permissions of “\(memberPath)”")
        }
        let built = try build(children, into: fd, at: components, flushing: &pending)
        if durable {
            // The folder with the files held (its own, and its parents' written before it).
            try pending.flushAll(with: [(FileSystem.FlushItem(fd: fd, name: memberPath, isDirectory: true), "flushing the folder “\(memberPath)” (fsync)")])
        }
        return FileWrapper(storage: .directory(built), permissions: permissions, modificationDate: nil)
    }

    /// The mode of the member at `components` in the package being replaced, if it is of `kind`.
    private func replacedPermissions(at components: [String], kind: FileStatus.Kind) -> UInt32? {
        guard let replacedTree, let status = try? fileSystem.status(of: components.joined(separator: "/"), in: replacedTree),
            status.kind == kind
        else { return nil }
        return status.permissions
    }

    /// Gives a new member the package's owner, where the process may (`EPERM` is not an error).
    private func giveOwner(_ fd: CInt, _ memberPath: String) throws(Errno) {
        guard let owner else { return }
        do { try fileSystem.changeOwner(fd, user: owner.user, group: owner.group, name: memberPath) } catch {
            if error != .notPermitted { throw error }
        }
    }

    /// Writes a regular file: create exclusively with its final mode, write; flushed and closed by `pending` when durable.
    private func write(
        _ data: Data, as name: String, permissions: UInt32?, in directory: CInt, at components: [String], flushing pending: inout PendingFlushes
    ) throws(DocumentKitError) -> FileWrapper {
        try create(name, permissions: permissions, in: directory, at: components, preloaded: data, flushing: &pending) {
            (fd, memberPath) throws(DocumentKitError) in
            do throws(Errno) { try fileSystem.write(fd, data, name: memberPath) } catch {
                throw fail(error, "writing the member “\(memberPath)”")
            }
        }
    }

    /// Copies a member that can't be linked from the file it was read from, in pieces (contents
    /// already in memory are written from there). If that file changed while it was copied, the
    /// save fails (`changedSinceRead`): the copy may be torn, and its recorded digest would lie.
    private func copy(
        _ lazy: LazyFileContents, as name: String, permissions: UInt32?, in directory: CInt, at components: [String],
        flushing pending: inout PendingFlushes
    ) throws(DocumentKitError) -> FileWrapper {
        try create(name, permissions: permissions, in: directory, at: components, preloaded: lazy.loaded, flushing: &pending) {
            (fd, memberPath) throws(DocumentKitError) in
            do throws(DocumentKitError) { try lazy.copy(to: fd, destinationPath: memberPath, using: fileSystem) } catch {
                var error = error
                if error.code != .changedSinceRead, let errno = error.errno, error.operation == .save {
                    throw fail(errno, "writing the member “\(memberPath)”")
                }
                error.operation = .save
                error.path = documentPath
                error.step = "copying the member “\(memberPath)” from “\(lazy.origin.displayPath)”"
                error.originalIsIntact = true
                throw error
            }
        }
    }

    /// Creates a regular file exclusively with its final mode and owner, fills it with `fill`,
    /// and closes it, or (durable) starts its writeback and leaves it to `pending` to flush and
    /// close; the wrapper refers to it (holding `preloaded`, if given).
    private func create(
        _ name: String, permissions: UInt32?, in directory: CInt, at components: [String], preloaded: Data?,
        flushing pending: inout PendingFlushes, fill: (CInt, String) throws(DocumentKitError) -> Void
    ) throws(DocumentKitError) -> FileWrapper {
        let memberPath = components.joined(separator: "/")
        let fd: CInt
        do {
            fd = try fileSystem.open(
                name, in: directory, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode_t(permissions ?? 0o666))
        } catch { throw fail(error, "creating the member “\(memberPath)”") }
        let status: FileStatus
        do throws(DocumentKitError) {
            do throws(Errno) {
                try giveOwner(fd, memberPath)
                if let permissions { try fileSystem.changeMode(fd, to: permissions, name: memberPath) }
            } catch { throw fail(error, "writing the member “\(memberPath)”") }
            try fill(fd, memberPath)
            do throws(Errno) {
                // A hint: the `fsync` that follows makes the file durable whatever this gave.
                if durable { try? fileSystem.startWriteback(fd, name: memberPath) }
                status = try fileSystem.status(of: fd, name: memberPath)
            } catch { throw fail(error, "writing the member “\(memberPath)”") }
        } catch {
            Glibc.close(fd)
            throw error
        }
        let origin = FileOrigin(root: newRoot, components: components, identity: status.identity, permissions: status.permissions)
        let wrapper = FileWrapper(
            storage: .lazy(LazyFileContents(origin: origin, mapped: false, preloaded: preloaded, fileSystem: fileSystem)),
            permissions: status.permissions, modificationDate: Date(nanosecondsSince1970: status.modificationTime))
        if durable {
            try pending.add(fd, memberPath: memberPath)
        } else {
            do { try fileSystem.close(fd, name: memberPath) } catch { throw fail(error, "closing the member “\(memberPath)”") }
        }
        return wrapper
    }

    /// Hard-links an unchanged member of a package; nil when it must be copied instead
    /// (another file system, too many links, not a package member, other permissions).
    /// Links from the newest copy a save made of these contents, else from where they were read.
    private mutating func link(
        _ lazy: LazyFileContents, as name: String, permissions: UInt32?, in directory: CInt, folder: [String]
    ) throws(DocumentKitError) -> FileWrapper? {
        if let copy = lazy.latestPackageCopy, copy.root !== lazy.origin.root,
            let linked = try? link(lazy, from: copy, as: name, permissions: permissions, in: directory, folder: folder)
        {
            return linked
        }
        return try link(lazy, from: lazy.origin, as: name, permissions: permissions, in: directory, folder: folder)
    }

    private mutating func link(
        _ lazy: LazyFileContents, from origin: FileOrigin, as name: String, permissions: UInt32?, in directory: CInt,
        folder: [String]
    ) throws(DocumentKitError) -> FileWrapper? {
        guard origin.root.isPackage else { return nil }
        if let permissions, permissions != origin.permissions { return nil }
        // Only from a package still in place: one exchanged into a version store (by a save of
        // another process or document since this tree was read) is a kept version now.
        let rootKey = ObjectIdentifier(origin.root)
        let inPlace = rootsInPlace[rootKey] ?? origin.root.isStillAtItsPath(using: fileSystem)
        rootsInPlace[rootKey] = inPlace
        guard inPlace else { return nil }
        var memberPath: String { (folder + [name]).joined(separator: "/") }
        let source: CInt
        do { source = try sourceDirectory(for: origin) } catch {
            if lazy.loaded != nil { return nil }
            throw changed(origin, memberPath, error)
        }
        do {
            try fileSystem.link(origin.name, in: source, as: name, in: directory)
        } catch {
            switch error {
            case .notPermitted, .notSupported:
                Self.noteNoHardLinks(error)
                return nil
            case .improperLink, .tooManyLinks: return nil
            case .noSuchFileOrDirectory where lazy.loaded != nil: return nil
            case .noSuchFileOrDirectory: throw changed(origin, memberPath, error)
            default: throw fail(error, "hard-linking the unchanged member “\(memberPath)”")
            }
        }
        // The name may have been replaced since the read: check the file we linked is that file.
        let status: FileStatus
        do { status = try fileSystem.status(of: name, in: directory) } catch {
            throw fail(error, "checking the linked member “\(memberPath)”")
        }
        guard status.kind == .regular, status.identity.isUnchanged(comparedTo: origin.identity.withoutChangeTime) else {
            do { try fileSystem.unlink(name, in: directory) } catch {
                throw fail(error, "removing a wrongly linked member “\(memberPath)”")
            }
            if lazy.loaded != nil { return nil }
            throw changed(origin, memberPath, nil)
        }
        let newOrigin = FileOrigin(
            root: newRoot, folder: folder, name: name, identity: status.identity.withoutChangeTime,
            permissions: status.permissions)
        lazy.recordCopy(at: newOrigin)
        return FileWrapper(
            storage: .lazy(LazyFileContents(origin: newOrigin, mapped: false, preloaded: lazy.loaded)),
            permissions: status.permissions, modificationDate: Date(nanosecondsSince1970: status.modificationTime))
    }

    private static let logger = Logger(label: "DocumentKit.save")
    private static let loggedNoHardLinks = Atomic<Bool>(false)

    /// Logs, once per process, that unchanged members are copied because links are refused.
    private static func noteNoHardLinks(_ error: Errno) {
        guard !loggedNoHardLinks.exchange(true, ordering: .relaxed) else { return }
        logger.notice("This file system has no hard links (\(error.readableDescription)): unchanged members are copied")
    }

    private func changed(_ origin: FileOrigin, _ memberPath: String, _ errno: Errno?) -> DocumentKitError {
        DocumentKitError(
            .changedSinceRead, operation: .save, path: documentPath, step: "reusing the unchanged member “\(memberPath)”",
            errno: errno, originalIsIntact: true,
            detail: "“\(origin.displayPath)” changed or disappeared after it was read, and its old contents were never loaded.")
    }

    private mutating func sourceDirectory(for origin: FileOrigin) throws(Errno) -> CInt {
        let key = SourceKey(root: ObjectIdentifier(origin.root), path: origin.folder[...])
        // Consecutive members almost always come from the same folder: skip the hashing.
        if let last = lastSource, last.key == key { return last.fd }
        if let open = sourceDirectories[key] {
            lastSource = (key, open.rawValue)
            return open.rawValue
        }
        let fd = try origin.openParentDirectory(using: fileSystem)
        sourceDirectories[key] = Descriptor(owning: fd)
        lastSource = (key, fd)
        return fd
    }

    /// Member names must be plain names: not empty, not `.` or `..`, no `/` or NUL.
    static func validate(name: String, in documentPath: String) throws(DocumentKitError) {
        if name.isEmpty || name == "." || name == ".." || name.utf8.contains(UInt8(ascii: "/")) || name.utf8.contains(0) {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: documentPath, originalIsIntact: true,
                detail: "“\(name)” is not a valid member name.")
        }
    }
}

extension Date {
    /// The date `nanoseconds` after 1970-01-01.
    package init(nanosecondsSince1970 nanoseconds: Int64) {
        self.init(timeIntervalSince1970: Double(nanoseconds) / 1e9)
    }
}
