#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FormatVersioning
import Foundation
import GRDB

/// The persisted index of one library: an SQLite file (WAL, busy timeout) in the user's cache
/// folder. Each write is one transaction, so a process killed mid-update leaves the index as it
/// was before or after; two processes writing at once wait for each other and lose nothing.
final class IndexDatabase: Sendable {
    let queue: DatabaseQueue
    let path: String
    /// Whether opening made the file (it had no tables yet).
    let isNew: Bool

    /// What a database records of the library and the configuration it indexes.
    struct Identity: Sendable, Hashable {
        var library: IndexLocation.LibraryIdentity
        var configuration: String
    }

    /// Opens (creating) the database at `path` and checks that it is an index of `identity`.
    /// - Throws: ``Problem`` saying why the file can't be used as it is (it is then rebuilt).
    init(path: String, identity: Identity) throws(Problem) {
        self.path = path
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(30)
        configuration.journalMode = .wal
        configuration.label = "DocumentKit.DocumentIndex"
        configuration.limitPageCache()
        do { queue = try DatabaseQueue(path: path, configuration: configuration) } catch {
            throw Problem.damaged("\(error)")
        }
        do {
            isNew = try queue.write { db -> Bool in
                do {
                    let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                    let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                    if version == 0 && tables.isEmpty {
                        try db.execute(sql: IndexSchema.creation)
                        for (name, value) in [
                            ("format", IndexSchema.formatIdentifier), ("libraryPath", identity.library.realPath),
                            ("libraryDevice", String(identity.library.device)), ("libraryInode", String(identity.library.inode)),
                            ("configuration", identity.configuration), ("indexID", UUID().uuidString), ("sequence", "0"),
                        ] {
                            try db.execute(sql: "INSERT INTO meta (name, value) VALUES (?, ?)", arguments: [name, value])
                        }
                        return true
                    }
                    if version > IndexSchema.version { throw Problem.newer(version) }
                    guard tables.contains("meta"),
                        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'format'") == IndexSchema.formatIdentifier,
                        (1...IndexSchema.version).contains(version)
                    else { throw Problem.foreign }
                    // Version 1 is version 2 without accounted folders: nothing to convert.
                    if version == 1 { try db.execute(sql: IndexSchema.migrationFrom1) }
                    // Version 2 kept no stamps of member subfolders: its entries are read again once.
                    if version <= 2 { try db.execute(sql: IndexSchema.migrationFrom2) }
                    let meta = Dictionary(
                        try Row.fetchAll(db, sql: "SELECT name, value FROM meta").map { ($0["name"] as String, $0["value"] as String) },
                        uniquingKeysWith: { a, _ in a })
                    guard meta["libraryPath"] == identity.library.realPath,
                        meta["libraryDevice"] == String(identity.library.device),
                        meta["libraryInode"] == String(identity.library.inode)
                    else {
                        throw Problem.otherLibrary(meta["libraryPath"] ?? "?", meta["libraryDevice"] ?? "?", meta["libraryInode"] ?? "?")
                    }
                    guard meta["configuration"] == identity.configuration else { throw Problem.otherConfiguration }
                    return false
                }
            }
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem.damaged("\(error)")
        }
    }

    /// Why a database can't be used as it is.
    enum Problem: Error, Sendable, CustomStringConvertible {
        case damaged(String)
        case newer(Int)
        case foreign
        case otherLibrary(String, String, String)
        case otherConfiguration

        var description: String {
            switch self {
            case .damaged(let why): "it was damaged (\(why))"
            case .newer(let version): "it is in a newer format (version \(version); this code writes \(IndexSchema.version))"
            case .foreign: "it is not a document index (another SQLite database)"
            case .otherLibrary(let path, let device, let inode):
                "it was made for another library (\(path), device \(device), inode \(inode)): copied from another machine or folder"
            case .otherConfiguration: "it was made with another configuration"
            }
        }
    }

    /// Removes the database file and its WAL and shared-memory files.
    static func remove(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    // MARK: Reading

    func meta(_ name: String) throws -> String? {
        try queue.read { try String.fetchOne($0, sql: "SELECT value FROM meta WHERE name = ?", arguments: [name]) }
    }

    /// Gives back the memory SQLite's page cache holds (after every row was loaded: the snapshot
    /// holds them now, and the cache would cost about 80 bytes per entry more).
    func releaseMemory() { queue.releaseMemory() }

    /// Whether a full listing of the library was ever recorded.
    func isBuilt() throws -> Bool { try meta("built") == "1" }

    /// The stamps at which the non-package folders were listed.
    func folders() throws -> [String: FileStamp] { try folderStamps(in: "folders") }

    /// The stamps at which folders' names were accounted for by a change of this or another
    /// process (see ``DocumentIndex/noteChanges(at:since:)``), without a listing.
    func accounted() throws -> [String: FileStamp] { try folderStamps(in: "accounted") }

    /// The rows of `table` (`folders` or `accounted`: path, stamp), by path.
    private func folderStamps(in table: String) throws -> [String: FileStamp] {
        try queue.read { db in try Self.folderStamps(in: table, of: db) }
    }

    /// ``folderStamps(in:)`` in an open read of `db`.
    static func folderStamps(in table: String, of db: Database) throws -> [String: FileStamp] {
        var folders: [String: FileStamp] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, stamp FROM \(table)") {
            if let stamp = FileStamp(blob: row["stamp"]) { folders[row["path"]] = stamp }
        }
        return folders
    }

    /// The columns ``record(from:interner:)`` reads, in order.
    static let recordColumns =
        "path, identifier, format, version, key, fields, state, stateCount, stateDetail, packageStamp, manifestStamp, conflictStamp, "
        + "memberFolders"

    func records(sql: String, arguments: [String] = [], libraryURL: URL) throws -> [EntryRecord] {
        var records: [EntryRecord] = []
        try forEachRecord(sql: sql, arguments: arguments, libraryURL: libraryURL) { records.append($0) }
        return records
    }

    /// Calls `body` with each record an SQL condition selects, read by a cursor.
    func forEachRecord(sql: String, arguments: [String] = [], libraryURL: URL, _ body: (EntryRecord) -> Void) throws {
        try queue.read { db in try Self.forEachRecord(in: db, sql: sql, arguments: StatementArguments(arguments), libraryURL: libraryURL, body) }
    }

    /// ``forEachRecord(sql:arguments:libraryURL:_:)`` in an open read of `db`.
    static func forEachRecord(
        in db: Database, sql: String, arguments: StatementArguments, libraryURL: URL, _ body: (EntryRecord) -> Void
    ) throws {
        let rows = try Row.fetchCursor(db, sql: "SELECT \(recordColumns) FROM entries " + sql, arguments: arguments)
        var interner = RecordInterner(libraryURL: libraryURL)
        while let row = try rows.next() {
            if let record = record(from: row, interner: &interner) { body(record) }
        }
    }

    /// The paths of the entries directly in the folder `parent` whose identifier is `identifier`.
    func paths(withIdentifier identifier: String, inFolder parent: String) throws -> [String] {
        try queue.read { db in
            try String.fetchAll(db, sql: "SELECT path FROM entries WHERE identifier = ? AND parent = ?", arguments: [identifier, parent])
        }
    }

    /// The package stamps of the entries directly in the folder `parent`: their names, without their records.
    func packageStamps(inFolder parent: String) throws -> [String: FileStamp] {
        try queue.read { db in
            var stamps: [String: FileStamp] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT path, packageStamp FROM entries WHERE parent = ?", arguments: [parent])
            while let row = try rows.next() {
                if let stamp = Self.stamp(row, 1) { stamps[row[0]] = stamp }
            }
            return stamps
        }
    }

    /// The stamp in column `index`, read in place.
    static func stamp(_ row: Row, _ index: Int) -> FileStamp? {
        (try? row.withUnsafeData(atIndex: index) { FileStamp(blob: $0) }) ?? nil
    }

    /// The member folder stamps stored at `index` of `row`: nil for NULL (no member in a
    /// subfolder); ``MemberFolderStamps/unknown`` for the empty blob (a version 2 entry) or a
    /// malformed one, so that the entry is read again.
    static func memberFolders(_ row: Row, _ index: Int) -> MemberFolderStamps? {
        guard !row.hasNull(atIndex: index) else { return nil }
        let stamps = (try? row.withUnsafeData(atIndex: index) { data in data.flatMap { MemberFolderStamps(blob: $0) } }) ?? nil
        return stamps ?? .unknown
    }

    /// A record of a row of ``recordColumns``, read by column index; nil if its package stamp is unreadable.
    static func record(from row: Row, interner: inout RecordInterner) -> EntryRecord? {
        guard let package = stamp(row, 9) else { return nil }
        let stateName: String = row[6]
        let count: Int? = row[7]
        let state: IndexEntry.State
        switch stateName {
        case "current": state = .current
        case "conflicts": state = .unresolvedConflicts(count ?? 1)
        case "incomplete": state = .incomplete(row[8] ?? "")
        case "tooNew": state = .tooNew(count ?? 0)
        default: state = .damaged(row[8] ?? "")
        }
        let fieldsJSON: String = row[5]
        return EntryRecord(
            interner: &interner, relativePath: row[0], identifier: row[1], formatIdentifier: row[2], formatVersion: row[3],
            key: row[4], fieldsText: StoredFields.fieldsText(ofJSON: fieldsJSON), state: state, package: package,
            manifest: stamp(row, 10), conflicts: stamp(row, 11), memberFolders: memberFolders(row, 12))
    }

    // MARK: Writing

    /// Records the changes (and, if `built`, that a full listing was done) in one transaction.
    func write(_ changes: IndexSnapshot.Changes, sequence: UInt64, built: Bool) throws {
        try queue.write { db in
            for record in changes.removed {
                try db.cachedStatement(sql: "DELETE FROM entries WHERE path = ?").execute(arguments: [record.relativePath])
            }
            for record in changes.added + changes.changed + changes.restamped { try Self.upsert(record, in: db) }
            for (path, stamp) in changes.foldersChanged {
                if let stamp {
                    try db.execute(sql: "INSERT OR REPLACE INTO folders (path, stamp) VALUES (?, ?)", arguments: [path, stamp.blob])
                } else {
                    try db.execute(sql: "DELETE FROM folders WHERE path = ?", arguments: [path])
                }
            }
            for (path, stamp) in changes.accountedChanged {
                if let stamp {
                    try db.execute(sql: "INSERT OR REPLACE INTO accounted (path, stamp) VALUES (?, ?)", arguments: [path, stamp.blob])
                } else {
                    try db.execute(sql: "DELETE FROM accounted WHERE path = ?", arguments: [path])
                }
            }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE name = 'sequence'", arguments: [String(sequence)])
            if built { try db.execute(sql: "INSERT OR REPLACE INTO meta (name, value) VALUES ('built', '1')") }
        }
    }

    static func upsert(_ record: EntryRecord, in db: Database) throws {
        let (state, count, detail): (String, Int?, String?) =
            switch record.state {
            case .current: ("current", nil, nil)
            case .unresolvedConflicts(let n): ("conflicts", n, nil)
            case .incomplete(let why): ("incomplete", nil, why)
            case .tooNew(let version): ("tooNew", version, nil)
            case .damaged(let why): ("damaged", nil, why)
            }
        let fields = StoredFields.json(ofFieldsText: record.fieldsText)
        let modified = record.manifest?.modificationTime
        // Prepared once per connection: a first build writes a row per document.
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO entries (path, parent, identifier, format, version, key, keyFolded, fields, modified,
                    state, stateCount, stateDetail, packageStamp, manifestStamp, conflictStamp, memberFolders)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(
            arguments: [
                record.relativePath, parentPath(of: record.relativePath), record.identifier.text, record.formatIdentifier,
                record.formatVersion, record.key, record.key.map(DocumentIndex.folded), fields, modified, state, count, detail,
                record.package.blob, record.manifest?.blob, record.conflicts?.blob, record.memberFolders?.blob,
            ])
    }
}
