#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where per-user state goes by default, from the environment (read at each call).
///
/// Every folder named here is opened through ``PrivateFolder``, which refuses one another user
/// could have made or changed: a folder in the shared temporary folder is safe only because of it.
package enum UserFolders {
    /// An environment variable's value if it is an absolute path.
    private static func absolutePath(_ name: String, in environment: [String: String]) -> String? {
        guard let value = environment[name], value.hasPrefix("/") else { return nil }
        var path = value
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// `$XDG_RUNTIME_DIR` (private to the user, made by the login manager), if set.
    package static func runtimeDirectory(_ environment: [String: String]) -> String? {
        absolutePath("XDG_RUNTIME_DIR", in: environment)
    }

    /// `$XDG_STATE_HOME`, else `$HOME/.local/state` when `$HOME` is a folder of the user's own;
    /// nil when neither is usable (a system user whose home is `/` or missing).
    package static func stateDirectory(_ environment: [String: String], using fileSystem: FileSystem = .live) -> String? {
        absolutePath("XDG_STATE_HOME", in: environment) ?? ownHome(environment, using: fileSystem).map { $0 + "/.local/state" }
    }

    /// `$XDG_CACHE_HOME/DocumentKit`, else `$HOME/.cache/DocumentKit` when `$HOME` is a folder of
    /// the user's own: where the per-machine caches go (the library indexes, member digests); nil
    /// when neither is usable.
    package static func cacheDirectory(_ environment: [String: String], using fileSystem: FileSystem = .live) -> String? {
        (absolutePath("XDG_CACHE_HOME", in: environment) ?? ownHome(environment, using: fileSystem).map { $0 + "/.cache" })
            .map { $0 + "/DocumentKit" }
    }

    /// `$HOME` when it is a folder of the user's own (not `/`, not missing, owned by the user).
    private static func ownHome(_ environment: [String: String], using fileSystem: FileSystem) -> String? {
        guard let home = absolutePath("HOME", in: environment), home != "/",
            let status = try? fileSystem.status(of: home, in: AT_FDCWD, followingLink: true),
            status.kind == .directory, status.userID == geteuid()
        else { return nil }
        return home
    }

    /// `$TMPDIR`, else `/tmp`: the parent of the per-user fallback folders (`NAME-<uid>`).
    package static func temporaryDirectory(_ environment: [String: String]) -> String {
        absolutePath("TMPDIR", in: environment) ?? "/tmp"
    }

    /// `NAME-<uid>` in ``temporaryDirectory(_:)``: a per-user folder when no better place exists.
    package static func perUserTemporaryFolder(_ name: String, _ environment: [String: String]) -> String {
        let parent = temporaryDirectory(environment)
        return (parent == "/" ? "" : parent) + "/\(name)-\(geteuid())"
    }

}
