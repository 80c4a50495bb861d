import DocumentKitSystem
import SystemPackage
import Foundation

/// A file, a directory or a symbolic link, with its contents: the tree of a document.
///
/// The Linux counterpart of Foundation's `FileWrapper` on Apple platforms, as a value type.
/// Read a file or a package with ``init(contentsOf:options:fileSystem:)``, change the tree like any value,
/// and write it back atomically with ``write(to:options:)``. Members that were read from disk
/// and not changed remember the file they came from, so a package save hard-links them into
/// the new tree instead of copying their bytes.
public struct FileWrapper: Sendable {
    /// What kind of item a wrapper stands for.
    public enum Kind: Sendable, Hashable {
        case regularFile, directory, symbolicLink
    }

    package enum Storage: Sendable {
        case data(Data)
        case lazy(LazyFileContents)
        case provided(ProvidedFileContents)
        case directory([String: FileWrapper])
        case symbolicLink(String)
    }

    package var storage: Storage

    /// POSIX permission bits (`0o644`, ...). When nil, a save keeps the permissions of the item it
    /// replaces, or uses the defaults (`0o666`/`0o777` less the umask) for a new one.
    public var permissions: UInt32?

    /// The modification date of the item when it was read; nil for a wrapper made in memory.
    /// Saving does not set it: the file system records the time of the save.
    public private(set) var modificationDate: Date?

    /// The name the wrapper would like in its parent directory, as `FileWrapper.preferredFilename`
    /// on Apple platforms: the item's name when it was read from disk, else nil until set.
    /// ``addFileWrapper(_:)`` files a child under it; the keys of ``fileWrappers`` are the names
    /// actually used.
    public var preferredFilename: String?

    /// For the wrapper a save returns: the item the save put in place (from its open descriptor,
    /// not its path, which another program may have changed since); nil otherwise.
    package var savedIdentity: FileIdentity?

    /// A regular file with the given contents.
    public init(regularFileWithContents contents: Data, permissions: UInt32? = nil) {
        storage = .data(contents)
        self.permissions = permissions
    }

    /// A directory holding the given wrappers, keyed by file name.
    public init(directoryWithFileWrappers children: [String: FileWrapper] = [:], permissions: UInt32? = nil) {
        storage = .directory(children)
        self.permissions = permissions
    }

    /// A symbolic link to `destination` (stored as given, never resolved by DocumentKit).
    public init(symbolicLinkWithDestination destination: String) {
        storage = .symbolicLink(destination)
    }

    package init(storage: Storage, permissions: UInt32?, modificationDate: Date?, preferredFilename: String? = nil) {
        self.storage = storage
        self.permissions = permissions
        self.modificationDate = modificationDate
        self.preferredFilename = preferredFilename
    }

    /// The kind of item.
    public var kind: Kind {
        switch storage {
        case .data, .lazy, .provided: .regularFile
        case .directory: .directory
        case .symbolicLink: .symbolicLink
        }
    }

    /// Whether this is a regular file.
    public var isRegularFile: Bool { kind == .regularFile }
    /// Whether this is a directory (a package or a folder inside one).
    public var isDirectory: Bool { kind == .directory }
    /// Whether this is a symbolic link.
    public var isSymbolicLink: Bool { kind == .symbolicLink }

    /// The contents of a regular file, read from disk on first use if they were read lazily.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `changedSinceRead` if the file on disk is no
    ///   longer the one that was read, or the system error that reading met. A wrapper that is
    ///   not a regular file throws `invalidArgument`.
    public var regularFileContents: Data {
        get throws(DocumentKitError) {
            switch storage {
            case .data(let data): return data
            case .lazy(let lazy): return try lazy.data()
            case .provided(let provided): return try provided.data()
            case .directory, .symbolicLink:
                throw DocumentKitError(
                    .invalidArgument, operation: .read, path: "(file wrapper)",
                    detail: "Only a regular file has contents; this is a \(kind).")
            }
        }
    }

    /// The children of a directory, keyed by name; nil for other kinds.
    public var fileWrappers: [String: FileWrapper]? {
        if case .directory(let children) = storage { return children }
        return nil
    }

    /// The destination of a symbolic link, as stored in the link; nil for other kinds.
    public var symbolicLinkDestination: String? {
        if case .symbolicLink(let destination) = storage { return destination }
        return nil
    }

    /// The child with the given name, in a directory. Setting a child of a wrapper that is not
    /// a directory is a programming error.
    public subscript(name: String) -> FileWrapper? {
        get { fileWrappers?[name] }
        set {
            guard case .directory(var children) = storage else {
                preconditionFailure("FileWrapper: only a directory has children")
            }
            children[name] = newValue
            storage = .directory(children)
        }
    }

    /// The child at a relative path such as `attachments/photo.jpg`.
    public func fileWrapper(atPath path: String) -> FileWrapper? {
        var current = self
        for name in path.split(separator: "/") where name != "." {
            guard let next = current[String(name)] else { return nil }
            current = next
        }
        return current
    }

    /// The identity of the file this regular-file wrapper was read from, if it was read from disk
    /// and not changed since.
    public var fileIdentity: FileIdentity? {
        if case .lazy(let lazy) = storage { return lazy.origin.identity }
        return nil
    }

    /// The size of a regular file's contents, known without reading them: the size of the bytes
    /// in memory, or the size the file had when it was read. Nil for other kinds.
    package var regularFileSize: Int64? {
        switch storage {
        case .data(let data): Int64(data.count)
        case .lazy(let lazy): lazy.loaded.map { Int64($0.count) } ?? lazy.origin.identity.size
        case .provided(let provided): provided.loaded.map { Int64($0.count) } ?? provided.size
        case .directory, .symbolicLink: nil
        }
    }

    /// Calls `body` with a regular file's contents in pieces, in order. Contents not read yet
    /// are streamed from disk and not kept, so hashing a large member costs no memory.
    package func forEachContentChunk(_ body: (UnsafeRawBufferPointer) -> Void) throws(DocumentKitError) {
        switch storage {
        case .data(let data): data.withUnsafeBytes(body)
        case .lazy(let lazy): try lazy.forEachChunk(body)
        case .provided(let provided): try provided.forEachChunk { (bytes) throws(DocumentKitError) in body(bytes) }
        case .directory, .symbolicLink:
            throw DocumentKitError(
                .invalidArgument, operation: .read, path: "(file wrapper)",
                detail: "Only a regular file has contents; this is a \(kind).")
        }
    }

    package var origin: FileOrigin? {
        if case .lazy(let lazy) = storage { return lazy.origin }
        return nil
    }
}

extension FileWrapper: Equatable {
    /// Two wrappers are equal when they have the same kind, names and permissions, and their
    /// files have the same contents. Files read from disk compare by the identity of the file
    /// they were read from (device, inode, size, times) without reading them; otherwise bytes are
    /// compared. A file that can no longer be read is equal only to itself.
    public static func == (lhs: FileWrapper, rhs: FileWrapper) -> Bool {
        if let l = lhs.permissions, let r = rhs.permissions, l != r { return false }
        switch (lhs.storage, rhs.storage) {
        case (.directory(let l), .directory(let r)):
            return l == r
        case (.symbolicLink(let l), .symbolicLink(let r)):
            return l == r
        case (.lazy(let l), .lazy(let r)) where l === r || l.origin.identity.isUnchanged(comparedTo: r.origin.identity):
            return true
        case (.provided(let l), .provided(let r)) where l === r || (l.key != nil && l.key == r.key):
            return true
        case (.data, .data), (.data, .lazy), (.lazy, .data), (.lazy, .lazy), (.provided, _), (_, .provided):
            guard let l = try? lhs.regularFileContents, let r = try? rhs.regularFileContents else { return false }
            return l == r
        default:
            return false
        }
    }
}
