#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import Synchronization
import SystemPackage

/// Where processes that coordinate find each other: a folder holding the shared lock file.
///
/// Every process that must coordinate access to the same items must use the same namespace and
/// recognise the same package extensions. The default (``default(packageExtensions:)``) works for all processes of
/// one user on one machine:
/// `$DOCUMENTKIT_COORDINATION_DIR`, else `$XDG_RUNTIME_DIR/documentkit`, else
/// `$TMPDIR/documentkit-<uid>` (`/tmp` without `TMPDIR`), created with mode `0700`.
///
/// The folder is opened once and verified on its descriptor: a directory, not a symbolic link,
/// owned by the user, not writable by anyone else, in a folder that doesn't let others rename
/// it; so is the lock file (a regular file of the user's with one name). Anything else is refused
/// with ``/DocumentKitSystem/DocumentKitError/Code/untrustedFolder``: another user could otherwise block, redirect
/// or watch the user's coordinations.
///
/// For processes of several users, give them one folder, set explicitly (through
/// `DOCUMENTKIT_COORDINATION_DIR` or ``init(directory:packageExtensions:)``), owned by one of them
/// or root, of a group they share, with mode `2770`; the lock file is created with mode `0660`
/// there, and every member of the group is trusted.
///
/// The locks are open-file-description locks (`F_OFD_SETLK`) on byte ranges of one file,
/// `locks`, which is never replaced or removed: nothing piles up, and the kernel releases every
/// lock of a process that dies, even by `SIGKILL`. The byte layout is specified in
/// `Formats/coordination-locks/` (v2: where the folder is and what is verified).
public final class CoordinationNamespace: Sendable {
    /// The folder.
    public let directory: URL
    /// File-name extensions (lower case, without the dot) of directories that are packages:
    /// access to anything inside a package is access to the whole package.
    public let packageExtensions: Set<String>

    private let lockFilePath: String
    /// The verified namespace folder, open for the namespace's life.
    private let folder: PrivateFolder
    /// The lock file as opened (and verified) once: new descriptions are opened from it, never by name.
    private let lockFileDescriptor: Descriptor
    private let pool: Mutex<[CInt]>
    /// Folder chains resolved recently.
    let folderChains: FolderChainCache
    /// The lock file's identity (locks cover nested coordinations only on the same file).
    let lockFile: LockPlan.LockFile
    /// This process's presenters in the namespace.
    let presenters: PresenterRegistry
    /// Coordinated moves, for coordinations that waited for them.
    var moves: MoveJournal { MoveJournal(folder: movesFolder, modes: modes) }
    /// The modes of what the namespace makes in its folder (a group's too, when shared by one).
    let modes: NamespaceModes
    private let movesFolder: String
    /// `presenters/` in the namespace folder (kept as a string: every coordination looks there).
    private let presenceFolder: String
    private let presenceServer = Mutex<PresenceServer?>(nil)
    /// Set by ``close()``: no presence server starts again.
    private let isClosed = Mutex(false)

    /// This process's presence server, started when it first presents something.
    var presence: PresenceServer? {
        presenceServer.withLock { server in
            if server == nil, presenters.count > 0, !isClosed.withLock({ $0 }) {
                server = PresenceServer(folder: presenceFolder, registry: presenters, modes: modes)
            }
            return server
        }
    }

    /// Open connections to other processes' presence servers, between coordinations.
    private let presenceConnections = PresenceConnectionPool()
    /// Listings of the unit folders in `presenters/`.
    private let presenceEntries = PresenceEntryCache()

    /// Asks other processes' presenters.
    var presenceClient: PresenceClient {
        PresenceClient(
            folder: presenceFolder, ownName: presenceServer.withLock { $0?.name },
            pool: presenceConnections, entries: presenceEntries)
    }

    /// A namespace in `directory` (created, with its parents, if missing). `packageExtensions`
    /// are compared without regard to case.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `untrustedFolder` if the folder or its lock file could be
    ///   another user's (see the type's discussion); the system's error if it can't be created.
    public convenience init(directory: URL, packageExtensions: Set<String> = []) throws(DocumentKitError) {
        try self.init(directory: directory, packageExtensions: packageExtensions, sharing: .group, remedy: Self.remedy(explicit: true))
    }

    init(directory: URL, packageExtensions: Set<String>, sharing: PrivateFolder.Sharing, remedy: String) throws(DocumentKitError) {
        // Everything that can fail happens before any stored property is set.
        let folder = try PrivateFolder.open(
            directory.path, creating: true, sharing: sharing, what: "the coordination folder", remedy: remedy, operation: .open)
        let fd = try folder.openFile(
            "locks", flags: O_RDWR, creating: true, mode: folder.isSharedByGroup ? 0o660 : 0o600, what: "the coordination lock file",
            remedy: remedy, operation: .open)
        let lockFilePath = directory.appendingPathComponent("locks").path
        let status: FileStatus
        do { status = try FileSystem.live.status(of: fd, name: lockFilePath) } catch {
            try? FileSystem.live.close(fd, name: lockFilePath)
            throw DocumentKitError(error, operation: .open, path: lockFilePath, step: "checking the coordination lock file (fstat)")
        }
        self.folder = folder
        self.lockFileDescriptor = Descriptor(owning: fd)
        self.directory = directory
        self.packageExtensions = Set(packageExtensions.map { $0.lowercased() })
        self.lockFilePath = lockFilePath
        self.modes = NamespaceModes(sharedByGroup: folder.isSharedByGroup)
        self.movesFolder = directory.appendingPathComponent("moves").path
        self.presenceFolder = directory.appendingPathComponent("presenters").path
        self.lockFile = LockPlan.LockFile(device: status.device, inode: status.inode)
        self.pool = Mutex([])
        self.folderChains = FolderChainCache()
        let extensions = self.packageExtensions
        self.presenters = PresenterRegistry(isPackageName: { name in Self.isPackageName(name, extensions: extensions) })
    }

    /// What to do about a refused folder.
    private static func remedy(explicit: Bool) -> String {
        explicit
            ? "Use a folder of your own with mode 0700, or one shared by a group (mode 2770) for processes of several users."
            : "Remove it if it is not yours, or set DOCUMENTKIT_COORDINATION_DIR (or XDG_RUNTIME_DIR) to a folder of your own with mode 0700."
    }

    /// The default namespace of this user, for directories with the given package extensions:
    /// in ``defaultDirectory``. Only a folder set with `DOCUMENTKIT_COORDINATION_DIR` may be one
    /// shared by a group; the others must be the user's alone.
    public static func `default`(packageExtensions: Set<String> = []) throws(DocumentKitError) -> CoordinationNamespace {
        let explicit = ProcessInfo.processInfo.environment["DOCUMENTKIT_COORDINATION_DIR"].map { !$0.isEmpty } ?? false
        return try CoordinationNamespace(
            directory: defaultDirectory, packageExtensions: packageExtensions, sharing: explicit ? .group : .ownerWrites,
            remedy: remedy(explicit: explicit))
    }

    /// `$DOCUMENTKIT_COORDINATION_DIR`, else `$XDG_RUNTIME_DIR/documentkit`, else
    /// `$TMPDIR/documentkit-<uid>` (`/tmp/documentkit-<uid>` without `TMPDIR`).
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["DOCUMENTKIT_COORDINATION_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        if let runtime = UserFolders.runtimeDirectory(environment) {
            return URL(fileURLWithPath: runtime).appendingPathComponent("documentkit")
        }
        return URL(fileURLWithPath: UserFolders.perUserTemporaryFolder("documentkit", environment))
    }

    deinit {
        close()  // the lock file and the folder close with their Descriptors
    }

    /// Ends this process's part in the namespace, for a clean shutdown: the presence server stops
    /// (its thread ends, its socket and its entries go: other processes no longer ask this one),
    /// the watcher of presented items stops, and idle descriptors and connections close. What is
    /// left (the lock file and the folder, two descriptors) closes when the namespace is released.
    ///
    /// Close the documents and presenters of the namespace first: presenters still registered
    /// hear nothing more. Coordinations may still be made (without asking this process's presenters).
    public func close() {
        isClosed.withLock { $0 = true }
        let server = presenceServer.withLock { server -> PresenceServer? in
            defer { server = nil }
            return server
        }
        server?.stop(units: Array(presenters.presentedUnits.keys))
        presenters.watches.stopWatching()
        presenceConnections.closeAll()
        for fd in pool.withLock({ fds -> [CInt] in
            defer { fds = [] }
            return fds
        }) {
            Glibc.close(fd)
        }
    }

    /// An open file description of the lock file of its own (locks of one description never
    /// conflict with each other, so every coordination needs its own).
    ///
    /// A new description is opened from the lock file opened at the start, through
    /// `/proc/self/fd`, never by its name (which another process could have pointed elsewhere);
    /// without `/proc`, by name in the verified folder's descriptor, and only if it is still the
    /// same file.
    func takeDescription() throws(DocumentKitError) -> CInt {
        if let fd = pool.withLock({ $0.popLast() }) { return fd }
        let fileSystem = FileSystem.live
        var fd: CInt
        do { fd = try fileSystem.open("/proc/self/fd/\(lockFileDescriptor.rawValue)", in: AT_FDCWD, flags: O_RDWR) } catch {
            guard error == .noSuchFileOrDirectory else {
                throw DocumentKitError(error, operation: .open, path: lockFilePath, step: "opening the lock file again (/proc/self/fd)")
            }
            do { fd = try fileSystem.open("locks", in: folder.descriptor.rawValue, flags: O_RDWR | O_NOFOLLOW) } catch {
                throw DocumentKitError(error, operation: .open, path: lockFilePath, step: "opening the lock file again")
            }
        }
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: lockFilePath) } catch {
            try? fileSystem.close(fd, name: lockFilePath)
            throw DocumentKitError(error, operation: .open, path: lockFilePath, step: "checking the lock file (fstat)")
        }
        guard status.device == lockFile.device, status.inode == lockFile.inode else {
            try? fileSystem.close(fd, name: lockFilePath)
            throw DocumentKitError(
                .untrustedFolder, operation: .open, path: lockFilePath,
                detail: "The lock file was replaced while this process used it: coordinations would no longer exclude each other. Restart the app.")
        }
        return fd
    }

    /// Gives back a description that holds no locks any more.
    func returnDescription(_ fd: CInt) {
        let kept = pool.withLock { fds -> Bool in
            guard fds.count < 16, !isClosed.withLock({ $0 }) else { return false }
            fds.append(fd)
            return true
        }
        if !kept { Glibc.close(fd) }
    }

    /// Whether a directory named `name` is a package.
    func isPackageName(_ name: String) -> Bool { Self.isPackageName(name, extensions: packageExtensions) }

    private static func isPackageName(_ name: String, extensions: Set<String>) -> Bool {
        guard !extensions.isEmpty, let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }
}
