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
/// `/tmp/documentkit-<uid>`, created with mode `0700`.
///
/// For processes of several users, give them one folder they can all write (for example a
/// group-owned folder with mode `2770`) through `DOCUMENTKIT_COORDINATION_DIR` or
/// ``init(directory:packageExtensions:)``; the lock file is created with mode `0660` there.
///
/// The locks are open-file-description locks (`F_OFD_SETLK`) on byte ranges of one file,
/// `locks`, which is never replaced or removed: nothing piles up, and the kernel releases every
/// lock of a process that dies, even by `SIGKILL`. The byte layout is specified in
/// `Formats/coordination-locks/`.
public final class CoordinationNamespace: Sendable {
    /// The folder.
    public let directory: URL
    /// File-name extensions (lower case, without the dot) of directories that are packages:
    /// access to anything inside a package is access to the whole package.
    public let packageExtensions: Set<String>

    private let lockFilePath: String
    private let pool: Mutex<[CInt]>
    /// Folder chains resolved recently.
    let folderChains: FolderChainCache
    /// The lock file's identity (locks cover nested coordinations only on the same file).
    let lockFile: LockPlan.LockFile
    /// This process's presenters in the namespace.
    let presenters: PresenterRegistry
    /// Coordinated moves, for coordinations that waited for them.
    var moves: MoveJournal { MoveJournal(folder: movesFolder) }
    private let movesFolder: String
    /// `presenters/` in the namespace folder (kept as a string: every coordination looks there).
    private let presenceFolder: String
    private let presenceServer = Mutex<PresenceServer?>(nil)

    /// This process's presence server, started when it first presents something.
    var presence: PresenceServer? {
        presenceServer.withLock { server in
            if server == nil, presenters.count > 0 {
                server = PresenceServer(folder: presenceFolder, registry: presenters)
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
    public init(directory: URL, packageExtensions: Set<String> = []) throws(DocumentKitError) {
        // Everything that can fail happens before any stored property is set.
        let lockFilePath = directory.appendingPathComponent("locks").path
        let fd = try Self.openLockFile(in: directory.path, lockFilePath: lockFilePath)
        self.directory = directory
        self.packageExtensions = Set(packageExtensions.map { $0.lowercased() })
        self.lockFilePath = lockFilePath
        self.movesFolder = directory.appendingPathComponent("moves").path
        self.presenceFolder = directory.appendingPathComponent("presenters").path
        var status = stat()
        _ = fstat(fd, &status)
        self.lockFile = LockPlan.LockFile(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        self.pool = Mutex([fd])
        self.folderChains = FolderChainCache()
        let extensions = self.packageExtensions
        self.presenters = PresenterRegistry(isPackageName: { name in Self.isPackageName(name, extensions: extensions) })
    }

    private static func openLockFile(in path: String, lockFilePath: String) throws(DocumentKitError) -> CInt {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw DocumentKitError(
                .permissionDenied, operation: .create, path: path, step: "creating the coordination folder",
                detail: "\(error.localizedDescription)")
        }
        let fd = open(lockFilePath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o660)
        guard fd >= 0 else {
            throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: lockFilePath, step: "opening the lock file")
        }
        return fd
    }

    /// The default namespace of this user, for directories with the given package extensions.
    public static func `default`(packageExtensions: Set<String> = []) throws(DocumentKitError) -> CoordinationNamespace {
        try CoordinationNamespace(directory: defaultDirectory, packageExtensions: packageExtensions)
    }

    /// `$DOCUMENTKIT_COORDINATION_DIR`, else `$XDG_RUNTIME_DIR/documentkit`, else `/tmp/documentkit-<uid>`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["DOCUMENTKIT_COORDINATION_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return URL(fileURLWithPath: runtime).appendingPathComponent("documentkit")
        }
        return URL(fileURLWithPath: "/tmp/documentkit-\(getuid())")
    }

    deinit {
        pool.withLock { fds in for fd in fds { close(fd) } }
    }

    /// An open file description of the lock file of its own (locks of one description never
    /// conflict with each other, so every coordination needs its own).
    func takeDescription() throws(DocumentKitError) -> CInt {
        if let fd = pool.withLock({ $0.popLast() }) { return fd }
        let fd = open(lockFilePath, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: lockFilePath, step: "opening the lock file")
        }
        return fd
    }

    /// Gives back a description that holds no locks any more.
    func returnDescription(_ fd: CInt) {
        pool.withLock { fds in
            if fds.count < 16 { fds.append(fd) } else { close(fd) }
        }
    }

    /// Whether a directory named `name` is a package.
    func isPackageName(_ name: String) -> Bool { Self.isPackageName(name, extensions: packageExtensions) }

    private static func isPackageName(_ name: String, extensions: Set<String>) -> Bool {
        guard !extensions.isEmpty, let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }
}
