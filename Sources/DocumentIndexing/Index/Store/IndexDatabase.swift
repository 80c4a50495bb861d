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

    /// What a version 1 database records of the library and the configuration it indexes.
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
        do { queue = try DatabaseQueue(path: path, configuration: configuration) } catch {
            throw Problem.damaged("\(error)")
        }
        do {
            try queue.write { db in
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
                        return
                    }
                    if version > IndexSchema.version { throw Problem.newer(version) }
                    guard tables.contains("meta"),
                        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'format'") == IndexSchema.formatIdentifier,
                        version == IndexSchema.version
                    else { throw Problem.foreign }
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

    /// Whether a full listing of the library was ever recorded.
    func isBuilt() throws -> Bool { try meta("built") == "1" }

    func folders() throws -> [String: FileStamp] {
        try queue.read { db in
            var folders: [String: FileStamp] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT path, stamp FROM folders") {
                if let stamp = FileStamp(blob: row["stamp"]) { folders[row["path"]] = stamp }
            }
            return folders
        }
    }

    func records(sql: String, arguments: [String] = [], libraryURL: URL) throws -> [EntryRecord] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM entries " + sql, arguments: StatementArguments(arguments)).compactMap {
                Self.record(from: $0, libraryURL: libraryURL)
            }
        }
    }

    static func record(from row: Row, libraryURL: URL) -> EntryRecord? {
        guard let package = FileStamp(blob: row["packageStamp"]) else { return nil }
        let stateName: String = row["state"]
        let count: Int? = row["stateCount"]
        let detail: String = row["stateDetail"] ?? ""
        let state: IndexEntry.State
        switch stateName {
        case "current": state = .current
        case "conflicts": state = .unresolvedConflicts(count ?? 1)
        case "incomplete": state = .incomplete(detail)
        case "tooNew": state = .tooNew(count ?? 0)
        default: state = .damaged(detail)
        }
        var fields: [String: RawJSONValue] = [:]
        let fieldsText: String = row["fields"]
        if let texts = try? JSONDecoder().decode([String: String].self, from: Data(fieldsText.utf8)) {
            for (name, text) in texts { fields[name] = try? RawJSONValue(jsonText: text) }
        }
        let manifest = FileStamp(blob: row["manifestStamp"])
        let entry = IndexEntry(
            libraryURL: libraryURL, relativePath: row["path"], documentIdentifier: row["identifier"], formatIdentifier: row["format"],
            formatVersion: row["version"], key: row["key"], fields: fields,
            modificationDate: manifest.map { Date(timeIntervalSince1970: Double($0.modificationTime) / 1e9) }, state: state)
        return EntryRecord(
            entry: entry, package: package, manifest: manifest, conflicts: FileStamp(blob: row["conflictStamp"]))
    }

    // MARK: Writing

    /// Records the changes (and, if `built`, that a full listing was done) in one transaction.
    func write(_ changes: IndexSnapshot.Changes, sequence: UInt64, built: Bool) throws {
        try queue.write { db in
            for record in changes.removed {
                try db.execute(sql: "DELETE FROM entries WHERE path = ?", arguments: [record.entry.relativePath])
            }
            for record in changes.added + changes.changed { try Self.upsert(record, in: db) }
            for (path, stamp) in changes.foldersChanged {
                if let stamp {
                    try db.execute(sql: "INSERT OR REPLACE INTO folders (path, stamp) VALUES (?, ?)", arguments: [path, stamp.blob])
                } else {
                    try db.execute(sql: "DELETE FROM folders WHERE path = ?", arguments: [path])
                }
            }
            try db.execute(sql: "UPDATE meta SET value = ? WHERE name = 'sequence'", arguments: [String(sequence)])
            if built { try db.execute(sql: "INSERT OR REPLACE INTO meta (name, value) VALUES ('built', '1')") }
        }
    }

    static func upsert(_ record: EntryRecord, in db: Database) throws {
        let entry = record.entry
        let (state, count, detail): (String, Int?, String?) =
            switch entry.state {
            case .current: ("current", nil, nil)
            case .unresolvedConflicts(let n): ("conflicts", n, nil)
            case .incomplete(let why): ("incomplete", nil, why)
            case .tooNew(let version): ("tooNew", version, nil)
            case .damaged(let why): ("damaged", nil, why)
            }
        let fieldTexts = entry.fields.mapValues(\.jsonText)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let fields = String(decoding: (try? encoder.encode(fieldTexts)) ?? Data("{}".utf8), as: UTF8.self)
        let modified = record.manifest?.modificationTime
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO entries (path, parent, identifier, format, version, key, keyFolded, fields, modified,
                    state, stateCount, stateDetail, packageStamp, manifestStamp, conflictStamp)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                entry.relativePath, parentPath(of: entry.relativePath), entry.documentIdentifier, entry.formatIdentifier,
                entry.formatVersion, entry.key, entry.key.map(DocumentIndex.folded), fields, modified, state, count, detail,
                record.package.blob, record.manifest?.blob, record.conflicts?.blob,
            ])
    }
}
