#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation

extension FileWrapper {
    /// How a file or package is read.
    public struct ReadingOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Read every member's contents now, instead of when first asked for.
        public static let immediate = ReadingOptions(rawValue: 1 << 0)
        /// Map large members (64 KiB and more) into memory instead of copying them.
        ///
        /// > Important: A mapped file that another program truncates in place makes the process
        /// > crash (`SIGBUS`) when it touches the missing pages. DocumentKit's own saves never
        /// > modify files in place; use this only where no other program does either.
        public static let mapped = ReadingOptions(rawValue: 1 << 1)
    }

    /// How many levels of folders a package may nest: a package whose folders nest deeper is
    /// refused when read (`corruptData`) or saved (`invalidArgument`), so that no walk of a tree
    /// (reading, saving, hashing, comparing) recurses deeper than this, whatever is on disk.
    public static let maximumDepth = TreeLimits.maximumDepth

    /// The size above which a file read on its own is referred to rather than read: 1 MiB.
    public static let largeFileSize: Int64 = 1 << 20

    /// Reads the file or package at `url`.
    ///
    /// A file of up to ``largeFileSize`` bytes is read at once. A larger one is referred to, as
    /// a package's members are: its bytes are read when ``regularFileContents`` is first asked
    /// for, and a save copies it in pieces (never hard-links it: another program may rewrite
    /// it in place), so a 200 MB attachment costs no memory. If the file is changed or replaced
    /// before then, reading or saving it throws `changedSinceRead`; read with
    /// ``ReadingOptions/immediate`` to hold its bytes now.
    ///
    /// A package is read through directory descriptors, one level at a time: a symbolic link
    /// inside it is read as a link and never followed, and a FIFO, socket or device inside it is
    /// an error (it is never opened for reading). If `url` itself is a symbolic link, the item it
    /// points to is read. Interrupted saves next to the item are completed first (see
    /// ``FileWrapper/write(to:options:)``).
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the item (or the member) and the cause;
    ///   `corruptData` for a package nested deeper than ``maximumDepth`` levels.
    public init(contentsOf url: URL, options: ReadingOptions = [], fileSystem: FileSystem = .live) throws(DocumentKitError) {
        let location = try ItemLocation.resolve(url, operation: .read, using: fileSystem)
        try LeftoverCleaner.shared.cleanIfNeeded(location, using: fileSystem)
        let path = location.path
        let fd: CInt
        do { fd = try fileSystem.open(location.name, in: location.parent.rawValue, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            throw DocumentKitError(error, operation: .read, path: path, step: "opening it")
        }
        let descriptor = Descriptor(owning: fd)
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch {
            throw DocumentKitError(error, operation: .read, path: path, step: "reading its status")
        }
        let modified = Date(nanosecondsSince1970: status.modificationTime)
        switch status.kind {
        case .directory:
            // A version store's files are never hard-linked into a saved package (kept versions
            // must not share an inode with a live document): read from there, they are copied.
            let root = TreeRoot(directory: descriptor, path: path, isPackage: !TreeRoot.isInsideVersionStore(path), fileSystem: fileSystem)
            var reader = TreeReader(root: root, options: options, fileSystem: fileSystem)
            let children = try reader.readDirectory(fd, at: [])
            self.init(storage: .directory(children), permissions: status.permissions, modificationDate: modified)
        case .regular:
            // A large file is referred to, not read: its bytes are read when first asked for,
            // or streamed (hashed, copied into a save) without being held.
            let readNow = options.contains(.immediate) || status.size <= Self.largeFileSize
            let settled = readNow ? status : try Self.settledStatus(of: fd, status, path: path, using: fileSystem)
            var data: Data?
            if readNow {
                do { data = try readAll(fd, size: Int(settled.size), name: path, using: fileSystem) } catch {
                    throw DocumentKitError(error, operation: .read, path: path, step: "reading its contents")
                }
            }
            let root = TreeRoot(directory: location.parent, path: location.parentPath, isPackage: false, fileSystem: fileSystem)
            let origin = FileOrigin(root: root, components: [location.name], identity: settled.identity, permissions: settled.permissions)
            self.init(
                storage: .lazy(LazyFileContents(origin: origin, mapped: options.contains(.mapped), preloaded: data, fileSystem: fileSystem)),
                permissions: settled.permissions, modificationDate: Date(nanosecondsSince1970: settled.modificationTime))
        default:
            throw DocumentKitError(
                .unsupportedFileType, operation: .read, path: path,
                detail: "It is a \(status.kind), not a file or a package.")
        }
        preferredFilename = url.lastPathComponent
    }

    /// The status of the open file `fd` once its identity can be trusted to reveal a later change.
    ///
    /// A file is known by its identity (size, times) until it is read; a write in place changes
    /// its change time, except one in the same clock tick as the change before it (Git's "racily
    /// clean" files). A file changed in the last moments is therefore looked at again after a
    /// few ticks: unchanged then, any later write shows. One that keeps changing (being written)
    /// keeps the last status seen, and a later change is caught when its bytes are read.
    static func settledStatus(of fd: CInt, _ status: FileStatus, path: String, using fileSystem: FileSystem)
        throws(DocumentKitError) -> FileStatus
    {
        let tick: Int64 = 20_000_000  // 20 ms: more than the coarsest kernel clock tick (10 ms at HZ=100)
        var status = status
        for _ in 0..<3 {
            let now = Int64(Date().timeIntervalSince1970 * 1e9)
            let changed = max(status.modificationTime, status.identity.changeTime ?? status.modificationTime)
            guard now - changed < tick else { return status }
            usleep(useconds_t(tick / 1000))
            let again: FileStatus
            do { again = try fileSystem.status(of: fd, name: path) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "reading its status")
            }
            if again.identity.isUnchanged(comparedTo: status.identity) { return again }
            status = again
        }
        return status
    }

    /// Whether the item at `url` is still exactly what this wrapper was read from (or saved as):
    /// every file the same file (device, inode) in the same state (size, times), every folder
    /// with the same names. A file made in memory matches a file on disk with the same bytes.
    public func matchesContents(of url: URL) -> Bool {
        guard let other = try? FileWrapper(contentsOf: url) else { return false }
        return matchesIdentity(of: other)
    }

    private func matchesIdentity(of other: FileWrapper) -> Bool {
        switch (storage, other.storage) {
        case (.directory(let mine), .directory(let theirs)):
            guard mine.count == theirs.count else { return false }
            return mine.allSatisfy { name, child in theirs[name].map { child.matchesIdentity(of: $0) } ?? false }
        case (.symbolicLink(let mine), .symbolicLink(let theirs)):
            return mine == theirs
        case (.lazy(let mine), .lazy(let theirs)):
            return mine.origin.identity.isUnchanged(comparedTo: theirs.origin.identity)
        case (.data(let mine), .lazy):
            return (try? other.regularFileContents) == mine
        default:
            return false
        }
    }
}

/// Walks a package through directory descriptors.
struct TreeReader {
    let root: TreeRoot
    let options: FileWrapper.ReadingOptions
    let fileSystem: FileSystem

    func fail(_ errno: Errno, _ member: [String], _ step: String) -> DocumentKitError {
        let memberPath = member.joined(separator: "/")
        return DocumentKitError(
            errno, operation: .read, path: root.path, step: memberPath.isEmpty ? step : "\(step) “\(memberPath)”")
    }

    mutating func readDirectory(_ fd: CInt, at components: [String]) throws(DocumentKitError) -> [String: FileWrapper] {
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(fd, name: root.path, rejectingInvalidUTF8: true) } catch {
            guard error == .illegalByteSequence else { throw fail(error, components, "listing the folder") }
            // Such a member has no name a tree can hold: a save would lose it. Refuse, and keep it.
            let folder = components.isEmpty ? "the package" : "the folder “\(components.joined(separator: "/"))”"
            throw DocumentKitError(
                .corruptData, operation: .read, path: root.path, originalIsIntact: true,
                detail: "A name in \(folder) is not valid UTF-8: a file tree can't hold it, and a save would lose that member. "
                    + "Rename it (`ls -b` shows it).")
        }
        var children: [String: FileWrapper] = [:]
        children.reserveCapacity(names.count)
        for name in names {
            var member: [String] { components + [name] }
            let status: FileStatus
            do { status = try fileSystem.status(of: name, in: fd) } catch {
                if error == .noSuchFileOrDirectory { continue }  // removed while we listed
                throw fail(error, member, "reading the status of")
            }
            let modified = Date(nanosecondsSince1970: status.modificationTime)
            switch status.kind {
            case .regular:
                let origin = FileOrigin(root: root, folder: components, name: name, identity: status.identity, permissions: status.permissions)
                let lazy = LazyFileContents(origin: origin, mapped: options.contains(.mapped), fileSystem: fileSystem)
                if options.contains(.immediate) { _ = try lazy.data() }
                children[name] = FileWrapper(
                    storage: .lazy(lazy), permissions: status.permissions, modificationDate: modified, preferredFilename: name)
            case .directory:
                let member = member
                guard member.count <= FileWrapper.maximumDepth else {
                    // Refused before opening it: a damaged or hostile package must not make a
                    // walk of its tree recurse without bound (or hold a descriptor per level).
                    throw DocumentKitError(
                        .corruptData, operation: .read, path: root.path, originalIsIntact: true,
                        detail: "The package is nested deeper than \(FileWrapper.maximumDepth) levels "
                            + "(at “\(member.prefix(3).joined(separator: "/"))/…”, \(member.count) levels down); "
                            + "no document is that deep: it is damaged.")
                }
                let sub: CInt
                do { sub = try fileSystem.open(name, in: fd, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                    throw fail(error, member, "opening the folder")
                }
                defer { Glibc.close(sub) }
                let grandchildren = try readDirectory(sub, at: member)
                children[name] = FileWrapper(
                    storage: .directory(grandchildren), permissions: status.permissions, modificationDate: modified,
                    preferredFilename: name)
            case .symbolicLink:
                let destination: String
                do { destination = try fileSystem.readLink(name, in: fd) } catch {
                    throw fail(error, member, "reading the symbolic link")
                }
                children[name] = FileWrapper(
                    storage: .symbolicLink(destination), permissions: nil, modificationDate: modified, preferredFilename: name)
            default:
                throw DocumentKitError(
                    .unsupportedFileType, operation: .read, path: root.path,
                    detail: "The member “\(member.joined(separator: "/"))” is a \(status.kind); a package may hold only files, folders and symbolic links.")
            }
        }
        return children
    }
}
