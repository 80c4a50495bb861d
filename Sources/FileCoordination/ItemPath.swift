#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitSystem
import Foundation
import SystemPackage

/// An item as the coordinator sees it: the chain of names from the root, each identified by the
/// file system object that holds it, so that every spelling of a path (symbolic links, `.`,
/// `..`, repeated or trailing slashes, letter case in a case-insensitive folder) gives the same keys.
struct ItemPath: Sendable, Equatable {
    /// One name on the way: the folder holding it (device, inode) and the name as that folder
    /// compares it (folded to lower case in case-insensitive folders).
    struct Component: Sendable, Hashable {
        let device: UInt64
        let folderInode: UInt64
        let name: String
        /// Whether this component is a package (a directory named with a package extension).
        let isPackage: Bool

        /// The lock key: FNV-1a (64-bit) of device, folder inode (little-endian) and the name's
        /// UTF-8 bytes. Specified in `Formats/coordination-locks/v1`.
        var key: UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ byte: UInt8) {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: device >> UInt64(shift))) }
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: folderInode >> UInt64(shift))) }
            for byte in name.utf8 { mix(byte) }
            return hash
        }
    }

    /// From the outermost folder below `/` down to the item itself.
    let components: [Component]
    /// The resolved path, for the accessor and messages.
    let path: String

    /// Resolves `url`. The folders on the way must exist up to the nearest existing one; names
    /// below it are taken as given. A symbolic link at the end is resolved only when asked.
    static func resolve(_ url: URL, resolvingFinalLink: Bool, namespace: CoordinationNamespace)
        throws(DocumentKitError) -> ItemPath
    {
        let requested = url.path
        guard url.isFileURL, !requested.isEmpty else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: url.absoluteString, detail: "Only file URLs can be coordinated.")
        }
        var absolute = requested.hasPrefix("/") ? requested : FileManager.default.currentDirectoryPath + "/" + requested
        if resolvingFinalLink, let real = realPath(absolute) { absolute = real }
        // The folder part is resolved by the kernel (realpath); missing trailing folders are kept as names.
        var names = absolute.split(separator: "/").map(String.init).filter { $0 != "." && !$0.isEmpty }
        var folded: [String] = []
        for name in names {
            if name == ".." { _ = folded.popLast() } else { folded.append(name) }
        }
        names = folded
        guard let last = names.popLast() else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: requested, detail: "The root folder can't be coordinated.")
        }
        var existing = names
        var missing: [String] = []
        var folder = "/" + existing.joined(separator: "/")
        while realPath(folder) == nil, let name = existing.popLast() {
            missing.insert(name, at: 0)
            folder = "/" + existing.joined(separator: "/")
        }
        guard let realFolder = realPath(folder) else {
            throw DocumentKitError(.notFound, operation: .open, path: requested, detail: "No folder on its path exists.")
        }
        let chain = realFolder.split(separator: "/").map(String.init) + missing + [last]
        return try build(chain: chain, namespace: namespace, requested: requested)
    }

    private static func build(chain: [String], namespace: CoordinationNamespace, requested: String)
        throws(DocumentKitError) -> ItemPath
    {
        var components: [Component] = []
        components.reserveCapacity(chain.count)
        var folder = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: "/", step: "opening /") }
        defer { if folder >= 0 { close(folder) } }
        var folderStatus = stat()
        var folderExists = true
        var status = stat()
        _ = fstat(folder, &folderStatus)
        var caseInsensitive = dk_directory_is_case_insensitive(folder) == 1
        var path = ""
        for (index, name) in chain.enumerated() {
            path += "/" + name
            let comparedName = caseInsensitive ? name.precomposedStringWithCanonicalMapping.lowercased() : name
            var isDirectory = false
            var next: CInt = -1
            if folderExists, fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 {
                isDirectory = (status.st_mode & S_IFMT) == S_IFDIR
                if isDirectory, index < chain.count - 1 {
                    next = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
            }
            let isPackage = (isDirectory || !folderExists || index < chain.count - 1) && namespace.isPackageName(name)
            components.append(
                Component(
                    device: UInt64(folderExists ? folderStatus.st_dev : 0), folderInode: folderExists ? UInt64(folderStatus.st_ino) : 0,
                    name: folderExists ? comparedName : path, isPackage: isPackage))
            guard index < chain.count - 1 else { break }
            close(folder)
            folder = next
            if next >= 0 {
                _ = fstat(folder, &folderStatus)
                caseInsensitive = dk_directory_is_case_insensitive(folder) == 1
            } else {
                folderExists = false  // below a missing folder: keyed by the full path
            }
        }
        return ItemPath(components: components, path: path)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The index of the unit that is locked for this item: the outermost enclosing package, or
    /// the item itself.
    var lockUnitIndex: Int {
        components.firstIndex(where: \.isPackage) ?? (components.count - 1)
    }

    /// The path of the component at `index`.
    func path(upTo index: Int) -> String {
        "/" + path.split(separator: "/").prefix(index + 1).joined(separator: "/")
    }
}
