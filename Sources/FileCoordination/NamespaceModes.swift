#if canImport(Glibc)
import Glibc
#endif

/// The modes of what a namespace creates inside its folder (`presenters/`, `moves/`, presence
/// entries and sockets, move records): the user's alone, or, in a namespace shared by a group
/// (mode `2770`, `Formats/coordination-locks/v2`), the group's too, whatever the umask, so that
/// the group's other users find and ask this process's presenters and follow its moves.
struct NamespaceModes: Sendable {
    /// Whether the namespace folder is shared by a group.
    let sharedByGroup: Bool

    /// A folder's mode: `0700`, or `2770` (set-group-ID: what is made inside is the group's).
    var folder: mode_t { sharedByGroup ? 0o2770 : 0o700 }
    /// A file's or socket's mode: `0600`, or `0660`.
    var file: mode_t { sharedByGroup ? 0o660 : 0o600 }

    /// Creates the folder at `path` unless it exists, with ``folder`` whatever the umask.
    func makeFolder(_ path: String) {
        if mkdir(path, folder) == 0, sharedByGroup { chmod(path, folder) }
    }

    /// Gives the file or socket this process just made at `path` ``file``, whatever the umask.
    func setFileMode(_ path: String) {
        chmod(path, file)
    }
}
