#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FormatVersioning
import Foundation
import GRDB
import Logging
import Synchronization

/// The per-user cache of member digests, in an SQLite file (`Formats/member-digests/v1`): what
/// lets a new process open a package in which nothing changed without reading its members.
///
/// One row per package path holds the digests of its members with their files' identities,
/// read in one query and written in one transaction per package. ``/FormatVersioning/MemberHasher`` trusts a
/// digest only for a file with the same identity that is older than the digest (see
/// ``/FormatVersioning/CachedMemberDigest/isTrusted``), and only where it agrees with the manifest.
///
/// It is a cache, never the truth, and never an error: a damaged, foreign or newer file is moved
/// aside (`member-digests.sqlite.aside`) and rebuilt, a folder that can't be used means no cache;
/// each with one notice (logged as `DocumentKit.digests`, and kept in ``notices``). Processes
/// share the file: SQLite's transactions and a busy timeout keep every record, and a process
/// killed while writing leaves the last committed state.
public final class PersistentMemberDigestCache: MemberDigestCache {
    /// The file's name in its folder.
    public static let fileName = "member-digests.sqlite"
    /// The cache of the user running the process: `$XDG_CACHE_HOME/DocumentKit`, else
    /// `~/.cache/DocumentKit` (made `0700`). Opened when first used.
    public static let shared = PersistentMemberDigestCache(folderPath: nil)

    /// The folder's path given or found (nil: the user's cache folder is not known yet).
    private let requestedFolder: String?
    private let state = Mutex(State())
    private static let logger = Logger(label: "DocumentKit.digests")

    private struct State {
        var opened = false
        var database: DatabaseQueue?
        var folder: PrivateFolder?
        var notices: [String] = []
        /// The file was busy, not damaged: never moved aside.
        var keepsFile = false
    }

    /// A cache in the folder at `folderURL` (created `0700` if missing, and refused if another
    /// user could change it); nil for the user's cache folder. Nothing is opened before the first use.
    public convenience init(folderURL: URL?) {
        self.init(folderPath: folderURL?.standardizedFileURL.path)
    }

    private init(folderPath: String?) {
        requestedFolder = folderPath
    }

    /// The notices given so far (a file rebuilt, a cache turned off), oldest first.
    public var notices: [String] { state.withLock { $0.notices } }

    /// Whether the cache file is open and in use (it is opened by the first lookup).
    public var isAvailable: Bool {
        state.withLock { state in
            openIfNeeded(&state)
            return state.database != nil
        }
    }

    /// The cache file's path, or nil if it couldn't be used.
    public var filePath: String? {
        state.withLock { state in
            openIfNeeded(&state)
            return state.database?.path
        }
    }

    public func digests(forPackageAt packagePath: String) -> [CachedMemberDigest] {
        state.withLock { state in
            openIfNeeded(&state)
            guard let database = state.database else { return [] }
            do {
                let blob = try database.read { db in
                    try Data.fetchOne(db, sql: "SELECT members FROM package WHERE path = ?", arguments: [packagePath])
                }
                return blob.flatMap(DigestRecords.decode) ?? []
            } catch {
                recover(from: error, while: "reading", &state)
                return []
            }
        }
    }

    public func record(_ digests: [CachedMemberDigest], forPackageAt packagePath: String) {
        state.withLock { state in
            openIfNeeded(&state)
            guard let database = state.database else { return }
            do {
                try database.write { db in
                    if digests.isEmpty {
                        try db.execute(sql: "DELETE FROM package WHERE path = ?", arguments: [packagePath])
                    } else {
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO package (path, recordedAt, members) VALUES (?, ?, ?)",
                            arguments: [packagePath, DigestClock.now(), DigestRecords.encode(digests)])
                    }
                    // One recording in 64 also forgets the packages not recorded for 30 days (gone,
                    // or unchanged since: hashed once more), so the file doesn't grow for ever.
                    if UInt8.random(in: 0..<64) == 0 {
                        try db.execute(
                            sql: "DELETE FROM package WHERE recordedAt < ?",
                            arguments: [DigestClock.now() - Int64(Self.retention.components.seconds) * 1_000_000_000])
                    }
                }
            } catch {
                recover(from: error, while: "writing", &state)
            }
        }
    }

    /// How long a package's digests are kept without being recorded again: 30 days.
    public static let retention: Duration = .seconds(30 * 24 * 3600)

    /// Forgets packages recorded more than `age` ago (a package unchanged since is hashed once
    /// more): the file doesn't grow with every package ever opened.
    public func removeRecords(olderThan age: Duration) {
        state.withLock { state in
            openIfNeeded(&state)
            guard let database = state.database else { return }
            let limit = DigestClock.now() - Int64(age.components.seconds) * 1_000_000_000
            do {
                try database.write { db in
                    try db.execute(sql: "DELETE FROM package WHERE recordedAt < ?", arguments: [limit])
                }
            } catch {
                recover(from: error, while: "pruning", &state)
            }
        }
    }

    // MARK: Opening

    private func notice(_ message: String, _ state: inout State) {
        state.notices.append(message)
        Self.logger.notice("\(message)")
    }

    private func openIfNeeded(_ state: inout State) {
        guard !state.opened else { return }
        state.opened = true
        guard let folderPath = requestedFolder ?? UserFolders.cacheDirectory(ProcessInfo.processInfo.environment) else {
            notice("Member digests are not cached: neither XDG_CACHE_HOME nor a home folder of yours is set.", &state)
            return
        }
        let folder: PrivateFolder
        do {
            folder = try PrivateFolder.open(
                folderPath, creating: true, sharing: .ownerOnly, what: "the cache folder", remedy: "Set XDG_CACHE_HOME to a folder of your own.",
                operation: .open)
            // The file must be a regular file of the user's with one name.
            let fd = try folder.openFile(
                Self.fileName, flags: O_RDWR | O_CLOEXEC, creating: true, mode: 0o600, what: "the member digest cache",
                remedy: "Remove it; it is rebuilt.", operation: .open)
            close(fd)
        } catch {
            notice("Member digests are not cached (\(error.localizedDescription)); packages are hashed at each open.", &state)
            return
        }
        state.folder = folder
        let path = folderPath + "/" + Self.fileName
        if let database = connect(path, &state) {
            state.database = database
            return
        }
        if state.keepsFile { return }
        // Damaged, foreign or newer: moved aside, rebuilt once.
        moveAside(path, folder: folder, &state)
        state.database = connect(path, &state)
        if state.database == nil {
            notice("Member digests are not cached: “\(path)” can't be made; packages are hashed at each open.", &state)
        }
    }

    /// Opens the file and checks or makes its schema; nil (with a notice) if it is damaged,
    /// foreign or newer.
    private func connect(_ path: String, _ state: inout State) -> DatabaseQueue? {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "DocumentKit.digests"
        configuration.limitPageCache()
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration)
            let problem = try database.inDatabase { db -> String? in
                _ = try? db.execute(sql: "PRAGMA journal_mode = WAL")
                // A cache: a commit need not reach the disk before the save it was made in goes on
                // (WAL with NORMAL is never damaged by a crash, it may only forget the last commits,
                // whose packages are then hashed again). Was an `fdatasync` per open and per save.
                _ = try? db.execute(sql: "PRAGMA synchronous = NORMAL")
                return try DigestSchema.prepare(db)
            }
            if let problem {
                notice("The member digest cache “\(path)” \(problem): it is moved aside and rebuilt.", &state)
                try? database.close()
                return nil
            }
            return database
        } catch {
            let code = (error as? DatabaseError)?.resultCode
            if code == .SQLITE_BUSY || code == .SQLITE_LOCKED {
                // Held by other processes past the timeout: not damaged, just not for this process.
                state.keepsFile = true
                notice("The member digest cache “\(path)” stayed busy (\(error)); packages are hashed at each open.", &state)
                return nil
            }
            notice("The member digest cache “\(path)” can't be read (\(error)): it is moved aside and rebuilt.", &state)
            return nil
        }
    }

    /// After an error of SQLite: a damaged file is moved aside and rebuilt; anything else
    /// (busy past the timeout, a full disk) costs this lookup or record only.
    private func recover(from error: any Error, while step: String, _ state: inout State) {
        guard let database = state.database, let folder = state.folder else { return }
        let code = (error as? DatabaseError)?.resultCode
        guard code == .SQLITE_CORRUPT || code == .SQLITE_NOTADB else {
            Self.logger.notice("The member digest cache “\(database.path)” failed \(step): \(error)")
            return
        }
        let path = database.path
        notice("The member digest cache “\(path)” is damaged (\(error)): it is moved aside and rebuilt.", &state)
        try? database.close()
        state.database = nil
        moveAside(path, folder: folder, &state)
        state.database = connect(path, &state)
    }

    /// Renames the file to `….aside` (replacing an older one) and removes its journal files,
    /// which belong to it and not to the new one.
    private func moveAside(_ path: String, folder: PrivateFolder, _ state: inout State) {
        let fileSystem = FileSystem.live
        let name = Self.fileName
        try? fileSystem.rename(name, in: folder.descriptor.rawValue, to: name + ".aside", in: folder.descriptor.rawValue)
        for suffix in ["-wal", "-shm", "-journal"] {
            try? fileSystem.unlink(name + suffix, in: folder.descriptor.rawValue)
        }
    }
}
