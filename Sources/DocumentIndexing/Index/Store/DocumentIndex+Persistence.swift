import DocumentKitSystem
import Foundation

extension DocumentIndex {
    /// The configuration's text, recorded in the index and part of its file name: an index made
    /// for other extensions, fields or versions is another index.
    static func configurationText(_ configuration: Configuration) -> String {
        [
            configuration.packageExtensions.sorted().joined(separator: ","), configuration.manifestName,
            configuration.formatIdentifier ?? "", configuration.readerVersion.map(String.init) ?? "",
            configuration.keyField ?? "", configuration.fields.joined(separator: ","),
        ].joined(separator: "\u{1}")
    }

    /// Opens the persisted index (creating it), or rebuilds it with a notice when it can't be used.
    /// Nil when the index is not persistent or the cache folder can't be used (with a notice).
    static func openDatabase(_ configuration: Configuration, notices: inout [String]) -> IndexDatabase? {
        guard configuration.isPersistent else { return nil }
        let fileSystem = configuration.fileSystem
        guard let library = IndexLocation.LibraryIdentity(path: configuration.folderURL.path, using: fileSystem) else { return nil }
        let folderPath = configuration.cacheFolder?.standardizedFileURL.path
            ?? IndexLocation.defaultFolder(ProcessInfo.processInfo.environment, using: fileSystem)
        guard let folderPath else {
            notices.append("No cache folder for the index of \(library.realPath) (set XDG_CACHE_HOME or HOME): it is kept in memory only.")
            return nil
        }
        do {
            _ = try PrivateFolder.open(
                folderPath, creating: true, sharing: .ownerOnly, what: "the document index folder",
                remedy: "Set XDG_CACHE_HOME to a folder of your own.", operation: .open, using: fileSystem)
        } catch {
            notices.append("The index of \(library.realPath) is kept in memory only: \(error.description)")
            return nil
        }
        let text = configurationText(configuration)
        var named = library
        named.realPath = library.realPath + "\u{0}" + text
        let path = folderPath + "/" + named.fileName
        let identity = IndexDatabase.Identity(library: library, configuration: text)
        var database: IndexDatabase?
        do throws(IndexDatabase.Problem) {
            database = try IndexDatabase(path: path, identity: identity)
        } catch {
            notices.append("The index at \(path) \(error.description): rebuilt.")
            IndexDatabase.remove(at: path)
            database = try? IndexDatabase(path: path, identity: identity)
        }
        guard let database else { return nil }
        IndexLocation.markUsed(path, using: fileSystem)
        // An index file made now tidies the folder: those of libraries gone or unused for a
        // month are forgotten, so that it doesn't keep one for every library ever opened.
        if database.isNew { IndexLocation.prune(folder: folderPath, keeping: named.fileName, olderThan: IndexLocation.retention, using: fileSystem) }
        return database
    }

    /// A database operation failed: the index file is damaged. It is removed and made again; the
    /// answers come from the files meanwhile.
    func databaseFailed(_ error: any Error) {
        guard let database else { return }
        notice("The index at \(database.path) was damaged (\(error)): rebuilt.")
        let path = database.path
        self.database = nil
        IndexDatabase.remove(at: path)
        var notices: [String] = []
        self.database = Self.openDatabase(configuration, notices: &notices)
        for text in notices { notice(text) }
        indexID = (try? self.database?.meta("indexID")).flatMap { $0.flatMap(UUID.init(uuidString:)) } ?? UUID()
        if isLoaded { notifyReset() }
        if isLoaded, let database = self.database {
            var all = IndexSnapshot.Changes(added: Array(snapshot.records.values))
            all.foldersChanged = snapshot.folders.mapValues { Optional($0) }
            all.accountedChanged = snapshot.accounted.mapValues { Optional($0) }
            try? database.write(all, sequence: sequence, built: true)
        }
    }

    /// Loads the persisted record of `path` (for a listing refresh); nil if there is none.
    func persistedRecord(_ path: String) -> EntryRecord? {
        try? database?.records(sql: "WHERE path = ?", arguments: [path], libraryURL: configuration.folderURL).first
    }

    /// Tells the live subscribers the index was rebuilt: one ``IndexBatch/Kind/reset`` batch with every entry.
    func notifyReset() {
        guard !subscribers.isEmpty else { return }
        sequence += 1
        let all = snapshot.records.values.map(\.entry).sorted { $0.relativePath < $1.relativePath }
        let batch = IndexBatch(indexID: indexID, sequence: sequence, kind: .reset, added: all)
        for continuation in subscribers.values { continuation.yield(batch) }
    }

    /// Records changes in the persisted index.
    func persist(_ changes: IndexSnapshot.Changes, built: Bool) {
        guard let database, !changes.isEmpty || built else { return }
        do { try database.write(changes, sequence: sequence, built: built) } catch { databaseFailed(error) }
    }

    /// Loads every entry of the persisted index into memory (before a full refresh).
    func loadSnapshot() {
        guard let database else { return }
        do {
            guard try database.isBuilt() else { return }
            snapshot.records = RecordTable()
            let loaded = try database.loadAll(libraryURL: configuration.folderURL)
            snapshot.records = loaded.records
            snapshot.known = [:]
            snapshot.folders = loaded.folders
            snapshot.accounted = loaded.accounted
            database.releaseMemory()
        } catch {
            databaseFailed(error)
            snapshot = IndexSnapshot()
        }
    }

    /// Loads the folders, and the names and package stamps of the entries of the folders whose
    /// stamp changed (before a listing refresh): a record is loaded only if its package changed or went.
    func loadListing() {
        guard let database else { return }
        do {
            guard try database.isBuilt() else { return }
            snapshot.folders = try database.folders()
            snapshot.accounted = try database.accounted()
            var changedFolders: [String] = []
            for (path, stamp) in snapshot.folders {
                let now = reader.folderStamp(path)
                if now != stamp && now != snapshot.accounted[path] { changedFolders.append(path) }
            }
            var known: [String: FileStamp] = [:]
            for folder in changedFolders { known.merge(try database.packageStamps(inFolder: folder)) { a, _ in a } }
            snapshot.records = RecordTable()
            snapshot.known = known
        } catch {
            databaseFailed(error)
            snapshot = IndexSnapshot()
        }
    }

    /// The entries an SQL condition selects from the persisted index; nil when there is none to ask.
    func query(_ sql: String, _ arguments: [String]) -> [IndexEntry]? {
        guard !isLoaded, let database else { return nil }
        do {
            guard try database.isBuilt() else { return nil }
            return try database.records(sql: sql + " ORDER BY path", arguments: arguments, libraryURL: configuration.folderURL)
                .map(\.entry)
        } catch {
            databaseFailed(error)
            return nil
        }
    }
}
