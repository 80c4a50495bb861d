#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem

/// Where the per-user caches go by default.
enum DigestCacheLocation {
    /// `$XDG_CACHE_HOME/DocumentKit`, else `$HOME/.cache/DocumentKit` when `$HOME` is a folder of
    /// the user's own; nil when neither is usable.
    static func defaultFolder(_ environment: [String: String], using fileSystem: FileSystem = .live) -> String? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return (cache.hasSuffix("/") ? String(cache.dropLast()) : cache) + "/DocumentKit"
        }
        guard let home = environment["HOME"], home.hasPrefix("/"), home != "/",
            let status = try? fileSystem.status(of: home, in: AT_FDCWD, followingLink: true),
            status.kind == .directory, status.userID == geteuid()
        else { return nil }
        return (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.cache/DocumentKit"
    }
}
