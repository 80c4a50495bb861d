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
        /// UTF-8 bytes. Specified in `Formats/coordination-locks/v1`. Computed once: components
        /// of folders are cached and their keys used by every coordination below them.
        let key: UInt64

        init(device: UInt64, folderInode: UInt64, name: String, isPackage: Bool) {
            self.device = device
            self.folderInode = folderInode
            self.name = name
            self.isPackage = isPackage
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ byte: UInt8) {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: device >> UInt64(shift))) }
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: folderInode >> UInt64(shift))) }
            for byte in name.utf8 { mix(byte) }
            key = hash
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
        try resolveNoting(url, resolvingFinalLink: resolvingFinalLink, namespace: namespace).item
    }

    /// ``resolve(_:resolvingFinalLink:namespace:)``, also returning the path as `url` spelled it
    /// (reading a URL's path costs as much as the rest of the resolution: do it once).
    static func resolveNoting(_ url: URL, resolvingFinalLink: Bool, namespace: CoordinationNamespace)
        throws(DocumentKitError) -> (item: ItemPath, requestedPath: String)
    {
        // The percent-encoded path is much cheaper to get; decode only when there is something to decode.
        var requested = url.path(percentEncoded: true)
        if requested.utf8.contains(UInt8(ascii: "%")) { requested = url.path }
        guard url.isFileURL, !requested.isEmpty else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: url.absoluteString, detail: "Only file URLs can be coordinated.")
        }
        if !resolvingFinalLink, let cached = namespace.folderChains.lookupItem(requested) { return (cached, requested) }
        let item = try resolve(path: requested, resolvingFinalLink: resolvingFinalLink, namespace: namespace)
        return (item, requested)
    }

    private static func resolve(path requested: String, resolvingFinalLink: Bool, namespace: CoordinationNamespace)
        throws(DocumentKitError) -> ItemPath
    {
        var absolute = requested.hasPrefix("/") ? requested : FileManager.default.currentDirectoryPath + "/" + requested
        if resolvingFinalLink, let real = realPath(absolute) { absolute = real }
        while absolute.utf8.count > 1 && absolute.hasSuffix("/") { absolute.removeLast() }
        guard let slash = absolute.lastIndex(of: "/") else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: requested, detail: "Not an absolute path.")
        }
        var folder = String(absolute[..<slash])
        var name = String(absolute[absolute.index(after: slash)...])
        // Only a path that names its folder plainly is remembered (not relative ones, nor `.`/`..` at the end).
        var cacheable = requested.hasPrefix("/") && !resolvingFinalLink
        if name == "." || name == ".." {
            cacheable = false
            // The item is a folder named through `.` or `..`: let the kernel say which.
            guard let real = realPath(absolute), real != "/" else {
                throw DocumentKitError(.invalidArgument, operation: .open, path: requested, detail: "The root folder can't be coordinated.")
            }
            let realSlash = real.lastIndex(of: "/")!
            folder = String(real[..<realSlash])
            name = String(real[real.index(after: realSlash)...])
        }
        if folder.isEmpty { folder = "/" }
        guard !name.isEmpty else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: requested, detail: "The root folder can't be coordinated.")
        }
        let chain = try folderChain(folder, namespace: namespace, requested: requested)
        let comparedName = chain.caseInsensitive ? name.precomposedStringWithCanonicalMapping.lowercased() : name
        let path = (chain.realPath == "/" ? "" : chain.realPath) + "/" + name
        let last = Component(
            device: chain.device, folderInode: chain.inode, name: chain.exists ? comparedName : path, isPackage: false)
        var components = chain.components
        components.append(last)
        let item = ItemPath(components: components, path: path)
        if chain.exists && cacheable {
            // Valid for as long as the folder's chain is (a name in a folder always means the same item key).
            namespace.folderChains.storeItem(item, for: requested, inFolder: folder)
        }
        return item
    }

    private struct FolderChain {
        let components: [Component]
        let realPath: String
        let device: UInt64
        let inode: UInt64
        let caseInsensitive: Bool
        let exists: Bool
    }

    /// The folder's own chain (from below `/` down to the folder), from the cache while valid.
    private static func folderChain(_ folder: String, namespace: CoordinationNamespace, requested: String)
        throws(DocumentKitError) -> FolderChain
    {
        if let entry = namespace.folderChains.lookup(folder) {
            return FolderChain(
                components: entry.components, realPath: entry.realPath, device: entry.device, inode: entry.inode,
                caseInsensitive: entry.caseInsensitive, exists: true)
        }
        // Up to the nearest existing folder, resolved by the kernel; missing ones kept as names.
        var existing = folder
        var missing: [String] = []
        var real = realPath(existing)
        while real == nil, existing != "/", let slash = existing.lastIndex(of: "/") {
            missing.insert(String(existing[existing.index(after: slash)...]), at: 0)
            existing = slash == existing.startIndex ? "/" : String(existing[..<slash])
            real = realPath(existing)
        }
        guard let realFolder = real else {
            throw DocumentKitError(.notFound, operation: .open, path: requested, detail: "No folder on its path exists.")
        }
        let names = realFolder.split(separator: "/").map(String.init) + missing.filter { $0 != "." && !$0.isEmpty }
        var components: [Component] = []
        var fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: "/", step: "opening /") }
        defer { if fd >= 0 { close(fd) } }
        var status = stat()
        _ = fstat(fd, &status)
        var caseInsensitive = dk_directory_is_case_insensitive(fd) == 1
        var path = ""
        for name in names {
            path += "/" + name
            guard fd >= 0 else {
                // Below a missing folder: keyed by the full path.
                components.append(Component(device: 0, folderInode: 0, name: path, isPackage: namespace.isPackageName(name)))
                continue
            }
            let compared = caseInsensitive ? name.precomposedStringWithCanonicalMapping.lowercased() : name
            components.append(
                Component(
                    device: UInt64(status.st_dev), folderInode: UInt64(status.st_ino), name: compared,
                    isPackage: namespace.isPackageName(name)))
            let next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(fd)
            fd = next
            if fd >= 0 {
                _ = fstat(fd, &status)
                caseInsensitive = dk_directory_is_case_insensitive(fd) == 1
            }
        }
        let realPath = names.isEmpty ? "/" : path
        guard fd >= 0 else {
            return FolderChain(components: components, realPath: realPath, device: 0, inode: 0, caseInsensitive: false, exists: false)
        }
        let chain = FolderChain(
            components: components, realPath: realPath, device: UInt64(status.st_dev), inode: UInt64(status.st_ino),
            caseInsensitive: caseInsensitive, exists: true)
        namespace.folderChains.store(
            FolderChainCache.Entry(
                device: chain.device, inode: chain.inode, components: components, realPath: realPath,
                caseInsensitive: caseInsensitive, expires: FolderChainCache.now() + 1_000_000_000),
            for: folder)
        return chain
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

    /// The lock unit's item offset in the lock file (also the unit's name in presence entries
    /// and the move journal).
    var unitOffset: Int64 { LockPlan.itemOffset(components[lockUnitIndex].key) }

    /// The path of the component at `index`.
    func path(upTo index: Int) -> String { Self.prefix(of: path, components: index + 1) }

    /// The folder holding the item at the absolute path `path`.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The first `count` components of an absolute path, as a path.
    static func prefix(of path: String, components count: Int) -> String {
        "/" + path.split(separator: "/").prefix(count).joined(separator: "/")
    }
}
