#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// A folder that holds one user's state (coordination locks, drafts), opened once and verified on
/// its open descriptor, never by path.
///
/// The folder is opened with `O_DIRECTORY | O_NOFOLLOW` (a symbolic link is refused) and
/// `fstat` of that descriptor must show a directory owned by the effective user that no other
/// user may change (``Sharing`` says who else may look in); the folder above it must not let
/// another user rename it away (owned by root or the user, and sticky if others may write it). A
/// folder that fails is refused with a ``DocumentKitError`` of code
/// ``DocumentKitError/Code/untrustedFolder`` naming it, what is wrong and what to do. A missing
/// folder is created with mode `0700` (and its missing parents too).
package struct PrivateFolder: Sendable {
    /// Who besides the owner may use the folder.
    package enum Sharing: Sendable, Hashable {
        /// Only the owner may change it; others may look in (a coordination namespace).
        case ownerWrites
        /// Only the owner may list, read or change it (private data such as drafts). A folder of
        /// the user's that others may only list or read is made `0700`: nothing can have been
        /// planted in it.
        case ownerOnly
        /// As ``ownerWrites``, or a folder set explicitly for processes of several users: owned by
        /// the user or root, of a group the process is in, group-writable with the set-group-ID bit
        /// (mode `2770`), not writable by others. Its group's members are then trusted.
        case group
    }

    /// The path it was opened at.
    package let path: String
    /// The open folder.
    package let descriptor: Descriptor
    /// What `fstat` said of it when it was verified.
    package let status: FileStatus
    /// Whether it is shared by a group (``Sharing/group`` and group-writable).
    package var isSharedByGroup: Bool { status.permissions & 0o020 != 0 }

    /// Opens (and, if `creating`, creates) the folder at the absolute `path` and verifies it.
    ///
    /// - Parameters:
    ///   - what: What the folder is, for messages ("the coordination folder").
    ///   - remedy: What the user can do instead, for messages ("set DOCUMENTKIT_COORDINATION_DIR to …").
    /// - Throws: `untrustedFolder` if it fails a check; the system's error (code from the errno)
    ///   if it can't be created or opened, `notFound` if it is missing and not `creating`.
    package static func open(
        _ path: String, creating: Bool, sharing: Sharing, what: String, remedy: String,
        operation: DocumentKitError.Operation, using fileSystem: FileSystem = .live
    ) throws(DocumentKitError) -> PrivateFolder {
        if creating {
            do { try makeDirectory(path, using: fileSystem) } catch {
                throw DocumentKitError(error, operation: operation, path: path, step: "creating \(what) (mode 0700)")
            }
        }
        let fd: CInt
        do { fd = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
            if error == .tooManySymbolicLinkLevels || error == .notDirectory {
                let kind = (try? fileSystem.status(of: path, in: AT_FDCWD))?.kind
                throw refusal(
                    path, what: what, remedy: remedy, operation: operation,
                    problem: kind == .symbolicLink ? "it is a symbolic link" : "it is not a folder")
            }
            throw DocumentKitError(error, operation: operation, path: path, step: "opening \(what)")
        }
        let descriptor = Descriptor(owning: fd)
        var status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch {
            throw DocumentKitError(error, operation: operation, path: path, step: "checking \(what) (fstat)")
        }
        let user = geteuid()
        if sharing == .ownerOnly, status.kind == .directory, status.userID == user, status.permissions & 0o022 == 0,
            status.permissions & 0o077 != 0
        {
            // Others could look in but never write: nothing is planted, close it.
            do { try fileSystem.changeMode(fd, to: status.permissions & ~0o077, name: path) } catch {
                throw DocumentKitError(error, operation: operation, path: path, step: "making \(what) private (chmod 700)")
            }
            status.permissions &= ~0o077
        }
        if let problem = problem(with: status, sharing: sharing, user: user, groups: processGroups()) {
            throw refusal(path, what: what, remedy: remedy, operation: operation, problem: problem)
        }
        // The folder above must not let another user swap this one for theirs.
        let parent: FileStatus
        do {
            let above = Descriptor(owning: try fileSystem.open("..", in: fd, flags: O_RDONLY | O_DIRECTORY))
            parent = try fileSystem.status(of: above.rawValue, name: path + "/..")
        } catch {
            throw DocumentKitError(error, operation: operation, path: path, step: "checking the folder above \(what)")
        }
        if let problem = parentProblem(with: parent, of: status, sharing: sharing, user: user) {
            throw refusal(path, what: what, remedy: remedy, operation: operation, problem: problem)
        }
        return PrivateFolder(path: path, descriptor: descriptor, status: status)
    }

    /// What makes a folder with `status` unfit for `sharing` by `user` (in `groups`), in words; nil if nothing.
    package static func problem(with status: FileStatus, sharing: Sharing, user: UInt32, groups: Set<UInt32>) -> String? {
        guard status.kind == .directory else { return "it is not a folder" }
        let mode = String(status.permissions, radix: 8)
        if sharing == .group, status.permissions & 0o020 != 0 {
            guard status.userID == user || status.userID == 0 else {
                return "it is shared by a group but owned by \(userDescription(status.userID)), neither you nor root"
            }
            guard groups.contains(status.groupID) else {
                return "it is writable by group \(status.groupID), which you are not a member of"
            }
            guard status.permissions & 0o2000 != 0 else {
                return "it is group-writable (mode \(mode)) without the set-group-ID bit: a shared folder has mode 2770"
            }
            guard status.permissions & 0o002 == 0 else { return "every user may change it (mode \(mode))" }
            return nil
        }
        guard status.userID == user else {
            return "it is owned by \(userDescription(status.userID)), not by you, \(userDescription(user))"
        }
        if status.permissions & 0o022 != 0 { return "other users may change it (mode \(mode))" }
        if sharing == .ownerOnly, status.permissions & 0o077 != 0 { return "other users may read it (mode \(mode))" }
        return nil
    }

    /// What makes `parent` unfit to hold a folder with `status`: someone else may rename it away.
    package static func parentProblem(with parent: FileStatus, of status: FileStatus, sharing: Sharing, user: UInt32) -> String? {
        guard parent.userID == 0 || parent.userID == user else {
            return "the folder above it is owned by \(userDescription(parent.userID)), who could replace it"
        }
        let sticky = parent.permissions & 0o1000 != 0
        let mode = String(parent.permissions, radix: 8)
        if parent.permissions & 0o002 != 0, !sticky {
            return "every user may rename it: the folder above it has mode \(mode), without the sticky bit"
        }
        if parent.permissions & 0o020 != 0, !sticky, !(sharing == .group && parent.groupID == status.groupID && status.permissions & 0o020 != 0) {
            return "the members of group \(parent.groupID) may rename it: the folder above it has mode \(mode), without the sticky bit"
        }
        return nil
    }

    /// Opens the file `name` in the folder (never following a symbolic link), creating it with
    /// `mode` if `creating`, and verifies the opened file: a regular file with one name, owned by
    /// the user (in a folder shared by a group: of the folder's group, not writable by others).
    package func openFile(
        _ name: String, flags: CInt, creating: Bool, mode: mode_t, what: String, remedy: String,
        operation: DocumentKitError.Operation, using fileSystem: FileSystem = .live
    ) throws(DocumentKitError) -> CInt {
        let filePath = path + "/" + name
        let fd: CInt
        do { fd = try fileSystem.open(name, in: descriptor.rawValue, flags: flags | O_NOFOLLOW | (creating ? O_CREAT : 0), mode: mode) } catch {
            if error == .tooManySymbolicLinkLevels {
                throw Self.refusal(filePath, what: what, remedy: remedy, operation: operation, problem: "it is a symbolic link")
            }
            throw DocumentKitError(error, operation: operation, path: filePath, step: "opening \(what)")
        }
        do throws(DocumentKitError) {
            let status: FileStatus
            do { status = try fileSystem.status(of: fd, name: filePath) } catch {
                throw DocumentKitError(error, operation: operation, path: filePath, step: "checking \(what) (fstat)")
            }
            if let problem = fileProblem(with: status) {
                throw Self.refusal(filePath, what: what, remedy: remedy, operation: operation, problem: problem)
            }
            // In a folder shared by a group, a file of the user's is the group's too (whatever the umask).
            if isSharedByGroup, status.userID == geteuid(), status.permissions & 0o060 != 0o060 {
                do { try fileSystem.changeMode(fd, to: status.permissions | 0o060, name: filePath) } catch {
                    throw DocumentKitError(error, operation: operation, path: filePath, step: "letting the group use \(what) (chmod g+rw)")
                }
            }
        } catch {
            try? fileSystem.close(fd, name: filePath)
            throw error
        }
        return fd
    }

    /// What makes a file with `status` in this folder untrustworthy, in words; nil if nothing.
    package func fileProblem(with status: FileStatus) -> String? {
        guard status.kind == .regular else { return "it is not a regular file" }
        guard status.linkCount == 1 else { return "it has \(status.linkCount) names (hard links): another name could be anywhere" }
        if isSharedByGroup {
            guard status.groupID == self.status.groupID else { return "it is not of the folder's group \(self.status.groupID)" }
            if status.permissions & 0o002 != 0 { return "every user may change it (mode \(String(status.permissions, radix: 8)))" }
            return nil
        }
        let user = geteuid()
        guard status.userID == user else {
            return "it is owned by \(Self.userDescription(status.userID)), not by you, \(Self.userDescription(user))"
        }
        return nil
    }

    private static func refusal(
        _ path: String, what: String, remedy: String, operation: DocumentKitError.Operation, problem: String
    ) -> DocumentKitError {
        DocumentKitError(
            .untrustedFolder, operation: operation, path: path,
            detail: "DocumentKit refuses \(what): \(problem). Another user could block, redirect or read your work through it. \(remedy)")
    }

    /// Creates the folder at `path` with mode `0700`, and its missing parents likewise; a folder
    /// that exists already is left as it is (and verified by the caller).
    private static func makeDirectory(_ path: String, using fileSystem: FileSystem) throws(Errno) {
        do { return try fileSystem.makeDirectory(path, in: AT_FDCWD, mode: 0o700) } catch {
            if error == .fileExists { return }
            guard error == .noSuchFileOrDirectory else { throw error }
        }
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { throw .noSuchFileOrDirectory }
        try makeDirectory(String(path[..<slash]), using: fileSystem)
        do { try fileSystem.makeDirectory(path, in: AT_FDCWD, mode: 0o700) } catch {
            if error != .fileExists { throw error }
        }
    }

    /// The process's effective and supplementary groups.
    private static func processGroups() -> Set<UInt32> {
        var groups: Set<UInt32> = [getegid()]
        let count = getgroups(0, nil)
        if count > 0 {
            var list = [gid_t](repeating: 0, count: Int(count))
            let got = getgroups(count, &list)
            if got > 0 { groups.formUnion(list.prefix(Int(got))) }
        }
        return groups
    }

    /// "dk-neighbour (uid 999)", or "uid 999" for a user without a name.
    package static func userDescription(_ uid: UInt32) -> String {
        var record = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 1024)
        if getpwuid_r(uid, &record, &buffer, buffer.count, &result) == 0, result != nil, let name = record.pw_name {
            return "\(String(cString: name)) (uid \(uid))"
        }
        return "uid \(uid)"
    }
}
