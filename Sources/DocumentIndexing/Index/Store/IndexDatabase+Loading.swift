import DocumentKitSystem
import Foundation
import GRDB

extension IndexDatabase {
    /// What a new process loads before a full refresh: every record, and the folders listed and
    /// accounted for, as one state of the file (another process may be writing it meanwhile).
    struct Loaded: Sendable {
        var records: RecordTable
        var folders: [String: FileStamp]
        var accounted: [String: FileStamp]
    }

    /// From this many rows on, the records are read in two halves at once, on two connections
    /// (task-local, so that tests can choose).
    @TaskLocal static var parallelLoadThreshold = 8_192

    /// Loads every record, folder and accounted stamp, as one state of the file.
    ///
    /// A large index is read in two halves by rowid, one on a second read-only connection, at
    /// once: a start-up on 100,000 entries is then half as long in SQLite. The halves are one
    /// state when no other connection committed between the first look at `data_version` and
    /// the last (SQLite's counter of other connections' commits); otherwise the whole index is
    /// read again in one transaction.
    func loadAll(libraryURL: URL) throws -> Loaded {
        let count = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM entries") } ?? 0
        if count >= Self.parallelLoadThreshold, ProcessInfo.processInfo.activeProcessorCount > 1,
            let loaded = try? loadInHalves(count: count, libraryURL: libraryURL)
        {
            return loaded
        }
        return try queue.read { db in
            var records = RecordTable()
            records.reserveCapacity(count)
            try Self.forEachRecord(in: db, sql: "", arguments: [], libraryURL: libraryURL) { records.insertIfAbsent($0) }
            return Loaded(
                records: records, folders: try Self.folderStamps(in: "folders", of: db),
                accounted: try Self.folderStamps(in: "accounted", of: db))
        }
    }

    /// ``loadAll(libraryURL:)`` in two halves at once; nil if another connection committed meanwhile.
    func loadInHalves(count: Int, libraryURL: URL) throws -> Loaded? {
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        configuration.limitPageCache()
        let second = try DatabaseQueue(path: path, configuration: configuration)
        let dataVersion = { [queue] in try queue.inDatabase { try Int.fetchOne($0, sql: "PRAGMA data_version") } }
        let before = try dataVersion()
        // The middle row by position (rowids grow with every replaced row: not by value).
        let middle = try queue.read {
            try Int64.fetchOne($0, sql: "SELECT rowid FROM entries ORDER BY rowid LIMIT 1 OFFSET ?", arguments: [count / 2])
        } ?? 0
        let halves = concurrentMap(2, threshold: 0) { [queue] half -> Result<[EntryRecord], any Error> in
            Result {
                try (half == 0 ? queue : second).read { db in
                    var records: [EntryRecord] = []
                    records.reserveCapacity(count / 2 + 1_024)
                    try Self.forEachRecord(
                        in: db, sql: half == 0 ? "WHERE rowid <= ?" : "WHERE rowid > ?", arguments: [middle], libraryURL: libraryURL
                    ) { records.append($0) }
                    return records
                }
            }
        }
        let stamps = try queue.read { db in (try Self.folderStamps(in: "folders", of: db), try Self.folderStamps(in: "accounted", of: db)) }
        guard try dataVersion() == before else { return nil }
        var records = RecordTable()
        records.reserveCapacity(count)
        for half in halves {
            for record in try half.get() { records.insertIfAbsent(record) }
        }
        return Loaded(records: records, folders: stamps.0, accounted: stamps.1)
    }
}
