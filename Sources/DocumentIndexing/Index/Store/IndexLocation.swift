#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FormatVersioning
import Foundation

/// Where a library's persisted index lives: a file in the user's cache folder, named by the
/// library's identity, so that a copy of the library (or the cache) never answers for another.
enum IndexLocation {
    /// `indexes` in the user's cache folder (`UserFolders.cacheDirectory`):
    /// `$XDG_CACHE_HOME/DocumentKit/indexes`, else `$HOME/.cache/DocumentKit/indexes`; nil when neither is usable.
    static func defaultFolder(_ environment: [String: String], using fileSystem: FileSystem) -> String? {
        UserFolders.cacheDirectory(environment, using: fileSystem).map { $0 + "/indexes" }
    }

    /// The library's identity: its real path, device and root inode.
    struct LibraryIdentity: Sendable, Hashable {
        var realPath: String
        var device: UInt64
        var inode: UInt64

        /// An identity from its parts.
        init(realPath: String, device: UInt64, inode: UInt64) {
            self.realPath = realPath
            self.device = device
            self.inode = inode
        }

        /// The identity of the library folder at `path`; nil if it can't be resolved.
        init?(path: String, using fileSystem: FileSystem) {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            realPath = String(cString: resolved)
            guard let status = try? fileSystem.status(of: realPath, in: AT_FDCWD, followingLink: true), status.kind == .directory
            else { return nil }
            device = status.device
            inode = status.inode
        }

        /// The index file's name: a digest of the identity, `.sqlite`.
        var fileName: String {
            let text = "\(realPath)\u{0}\(device)\u{0}\(inode)"
            return String(Array(text.utf8).withUnsafeBytes { MemberHasher.sha256(of: $0) }.prefix(32)) + ".sqlite"
        }
    }
}
