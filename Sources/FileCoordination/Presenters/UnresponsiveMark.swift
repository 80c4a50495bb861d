#if canImport(Glibc)
import Glibc
#endif

/// The mark a coordinator leaves in the namespace for a presenting process that missed its
/// deadline: `presenters/<pid>.<random>.v2.unresponsive`, an empty file (`Formats/presence/v3`).
///
/// While the mark is there, coordinators of every process skip that process at once instead of
/// waiting for it again. The marked process removes the mark when it runs again and finds that
/// it missed a request (a request whose coordinator had hung up, an answer nobody read, a
/// connection closed by a coordinator that gave up on it), and then tells all its presenters
/// that their items changed.
struct UnresponsiveMark: Sendable {
    /// The mark's path.
    let path: String

    /// The mark of the process named `name` (`<pid>.<random>.v2`) in `folder` (`presenters/`).
    init(folder: String, name: String) { path = folder + "/" + name + Self.suffix }

    /// The suffix of a mark's name.
    static let suffix = ".unresponsive"

    /// Whether the process is marked (one `access`).
    var isSet: Bool { access(path, F_OK) == 0 }

    /// Marks the process: created without following a link, owner-only like everything in `presenters/`.
    func set() {
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// Removes the mark; whether there was one.
    @discardableResult
    func clear() -> Bool { unlink(path) == 0 }
}
