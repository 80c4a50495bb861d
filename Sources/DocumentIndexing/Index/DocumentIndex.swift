import DocumentKitSystem
import Foundation
import Logging

/// A live, persisted index of the documents in a folder tree: DocumentKit's `NSMetadataQuery`.
///
/// The index lists the packages of a library with what their manifests say (identifier, format,
/// the app's key and fields) and whether they can be opened (``IndexEntry/State``). It reads
/// without coordinating each document: a DocumentKit save swaps a package whole, so a read sees
/// it old or new; a package a sync engine is still delivering shows as
/// ``IndexEntry/State/incomplete(_:)``, never hidden. The state check is cheap: the manifest is
/// parsed and every member it lists is checked for presence and size, never hashed.
///
/// Every answer is validated against the files: each entry keeps the stamps (device, inode, size,
/// modification and change times) of its package folder and manifest, and is read again when one
/// differs. The index is a cache, never the truth.
public actor DocumentIndex {
    /// What the index lists and where it keeps itself.
    public nonisolated let configuration: Configuration
    let reader: EntryReader
    let logger = Logger(label: "DocumentKit.DocumentIndex")
    /// The index's identity: a rebuilt index has a new one.
    public internal(set) var indexID = UUID()
    /// The number of the last batch that changed something.
    public internal(set) var sequence: UInt64 = 0
    var snapshot = IndexSnapshot()
    /// Whether ``snapshot`` holds every entry (after a full refresh).
    var isLoaded = false
    var noticeList: [String] = []
    /// The library folder's device and inode when the index was opened: another folder at the
    /// same path is not the library.
    let libraryStamp: FileStamp
    /// The persisted index, nil when it is kept in memory only.
    var database: IndexDatabase?
    /// The watcher and its state, while the index is live.
    var live: LiveState?
    /// The ``sync()`` calls waiting for their cookie's event.
    var syncWaiters: [String: CheckedContinuation<Void, Never>] = [:]
    var subscribers: [UUID: AsyncThrowingStream<IndexBatch, any Error>.Continuation] = [:]

    /// Opens the index of `configuration`'s library. Cheap: nothing of the library is read until asked.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `notFound` if the library folder is missing or not a folder.
    public init(_ configuration: Configuration) throws(DocumentKitError) {
        self.configuration = configuration
        self.reader = EntryReader(configuration: configuration)
        guard let libraryStamp = reader.folderStamp("") else {
            throw DocumentKitError(
                .notFound, operation: .open, path: configuration.folderURL.path,
                detail: "The library folder is missing or is not a folder: there is nothing to index.")
        }
        self.libraryStamp = libraryStamp
        var notices: [String] = []
        database = Self.openDatabase(configuration, notices: &notices)
        noticeList = notices
        for text in notices { logger.notice("\(text)") }
        if let database, let id = (try? database.meta("indexID")).flatMap({ $0.flatMap(UUID.init(uuidString:)) }) {
            indexID = id
            sequence = (try? database.meta("sequence")).flatMap { $0.flatMap { UInt64($0) } } ?? 0
        }
    }

    /// What was rebuilt or skipped and why, such as "the index at … was damaged (…): rebuilt".
    public var notices: [String] { noticeList }

    func notice(_ text: String) {
        noticeList.append(text)
        logger.notice("\(text)")
    }

    // MARK: Refreshing

    /// Brings the index up to date with the disk: a `stat` per entry and per folder, a manifest
    /// read only for entries whose stamps changed, a `readdir` only of folders whose stamp changed.
    ///
    /// Cost: in a new process, every row of the persisted index is loaded (about 380 bytes of
    /// memory per entry), then each package and its manifest are stat'ed (two `fstatat` per entry,
    /// relative to the library folder, spread over the machine's cores in a large library) and the
    /// version store's `documents` folder is listed once.
    /// Use it for commands about the whole library (list, check, watch); a command that names one
    /// document needs only a lookup and ``revalidate(relativePath:)``.
    ///
    /// - Returns: What changed (an ``IndexBatch/Kind/update`` batch; empty if nothing did).
    @discardableResult
    public func refresh() async throws(DocumentKitError) -> IndexBatch {
        try refreshNow()
    }

    /// ``refresh()``, synchronously on the actor.
    @discardableResult
    func refreshNow() throws(DocumentKitError) -> IndexBatch {
        try checkLibrary()
        if !isLoaded { loadSnapshot() }
        let changes = snapshot.refresh(using: reader)
        isLoaded = true
        let batch = publish(changes)
        persist(changes, built: true)
        return batch
    }

    /// Brings the index's list of documents up to date: a `readdir` of the folders whose stamp
    /// changed, a read of the packages new in them or swapped (a new package folder at a known
    /// name), and the removal of the gone ones; never a `stat` of the manifests of the whole library.
    ///
    /// Guarantees afterwards: every package in the library is in the index, and none that is
    /// gone, except what another process changed in a folder while a change noted with a mark
    /// ran (see ``noteChanges(at:since:)``); ``refresh()`` has no such exception. A package changed
    /// in place (its manifest rewritten, a member renamed into it) may still show as it was:
    /// revalidate the entry you use with ``revalidate(relativePath:)``.
    ///
    /// Cost: a `stat` per folder; of the changed folders only, the names and package stamps of
    /// their rows (not their records) and a `readdir` with an `fstatat` per name. A flat library's
    /// top folder changes on every atomic save: unless every process that saves tells the index
    /// with a mark, this is linear in the library's size after each save.
    @discardableResult
    public func refreshListing() async throws(DocumentKitError) -> IndexBatch {
        try checkLibrary()
        if isLoaded { return try refreshNow() }
        loadListing()
        let fromScratch = snapshot.folders.isEmpty
        let changes = snapshot.refresh(using: reader, listingOnly: true, load: persistedRecord)
        // Every folder listed and every package read: the snapshot is the whole index.
        isLoaded = fromScratch
        let batch = publish(changes)
        persist(changes, built: true)
        return batch
    }

    func checkLibrary() throws(DocumentKitError) {
        do throws(DocumentKitError) { try checkLibraryFolder() } catch {
            if live != nil { endLive(error) }
            throw error
        }
    }

    private func checkLibraryFolder() throws(DocumentKitError) {
        guard let stamp = reader.folderStamp("") else {
            throw DocumentKitError(
                .notFound, operation: .read, path: configuration.folderURL.path,
                detail: "The library folder is gone (deleted or moved away).")
        }
        guard stamp.device == libraryStamp.device, stamp.inode == libraryStamp.inode else {
            throw DocumentKitError(
                .changedSinceRead, operation: .read, path: configuration.folderURL.path,
                detail: "The library folder was moved away and another folder is at its path: make a new index for it.")
        }
    }

    /// Turns changes into the next batch, telling the subscribers; an empty batch keeps the sequence.
    func publish(_ changes: IndexSnapshot.Changes, silently: Bool = false, kind: IndexBatch.Kind = .update) -> IndexBatch {
        let documentChanges = changes.hasDocumentChanges
        if documentChanges { sequence += 1 }
        let batch = changes.batch(indexID: indexID, sequence: sequence, kind: kind)
        if documentChanges && !silently {
            for continuation in subscribers.values { continuation.yield(batch) }
        }
        return batch
    }

    // MARK: Reading

    /// Every entry, sorted by relative path. Reads the whole library the first time (a full
    /// ``refresh()``) if nothing has been read yet.
    public var entries: [IndexEntry] {
        if !isLoaded { _ = try? refreshNow() }
        return snapshot.records.values.map(\.entry).sorted { $0.relativePath < $1.relativePath }
    }

    /// The entries whose key field is exactly `key`, sorted by relative path.
    ///
    /// Until this process has refreshed the whole index, lookups are queries of the persisted
    /// index, as the last process left it: an indexed query, whatever the library's size. A hit
    /// followed by ``revalidate(relativePath:)`` (three `stat`s; the manifest only if changed) is
    /// all a command about one document needs; on a miss, call ``refreshListing()`` to find
    /// documents added since and look up again.
    public func entries(forKey key: String) -> [IndexEntry] {
        if let found = query("WHERE key = ?", [key]) { return found }
        return entries.filter { $0.key == key }
    }

    /// The entries whose key field equals `key` ignoring case, sorted by relative path.
    public func entries(forKeyIgnoringCase key: String) -> [IndexEntry] {
        let folded = Self.folded(key)
        if let found = query("WHERE keyFolded = ?", [folded]) { return found }
        return entries.filter { $0.key.map(Self.folded) == folded }
    }

    /// The entries of the document `identifier`: more than one when copies share it.
    public func entries(withDocumentIdentifier identifier: String) -> [IndexEntry] {
        if let found = query("WHERE identifier = ?", [identifier]) { return found }
        if !isLoaded { _ = try? refreshNow() }
        // Compared in the records' compact form: only the matches become entries (a long-running
        // process asks this for every request about a document).
        let wanted = CompactIdentifier(identifier)
        return snapshot.records.values.filter { $0.identifier == wanted }.map(\.entry).sorted { $0.relativePath < $1.relativePath }
    }

    /// The entry at `path` relative to the library, if there is one.
    public func entry(atRelativePath path: String) -> IndexEntry? {
        if let found = query("WHERE path = ?", [path]) { return found.first }
        if !isLoaded { _ = try? refreshNow() }
        return snapshot.records[path]?.entry
    }

    /// The case-folded form of a key, for lookups ignoring case.
    static func folded(_ key: String) -> String { key.lowercased() }

    /// Checks one document now (its stamps; its manifest again if one changed); nil if it is gone.
    ///
    /// Costs the same in a library of 1 or 100,000 documents: the entry's row, and a `stat` of
    /// its package folder, manifest and version-store folder.
    public func revalidate(relativePath: String) async -> IndexEntry? {
        var changes = IndexSnapshot.Changes()
        loadRecord(relativePath)
        snapshot.revalidate(relativePath, using: reader, into: &changes)
        if live != nil { updateWatches(packages: [relativePath]) }
        _ = publish(changes)
        persist(changes, built: false)
        return snapshot.records[relativePath]?.entry
    }

    /// Puts the persisted record of `path` in the snapshot, when the snapshot doesn't hold every entry.
    func loadRecord(_ path: String) {
        guard !isLoaded, snapshot.records[path] == nil, let database else { return }
        do {
            if let record = try database.records(sql: "WHERE path = ?", arguments: [path], libraryURL: configuration.folderURL).first {
                snapshot.records[path] = record
            }
        } catch {
            databaseFailed(error)
        }
    }

    // MARK: Live

    /// The live updates: first one ``IndexBatch/Kind/gathered`` batch with every entry, then
    /// ``IndexBatch/Kind/update`` batches, or a ``IndexBatch/Kind/reset`` after a rescan.
    public nonisolated func updates() -> IndexUpdates {
        let (stream, continuation) = AsyncThrowingStream<IndexBatch, any Error>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        Task { await self.subscribe(id, continuation) }
        return IndexUpdates(stream: stream)
    }

    func subscribe(_ id: UUID, _ continuation: AsyncThrowingStream<IndexBatch, any Error>.Continuation) async {
        do throws(DocumentKitError) {
            try startLive()
            try refreshNow()
            updateWatches(packages: Array(snapshot.records.keys))
        } catch {
            continuation.finish(throwing: error)
            return
        }
        let all = snapshot.records.values.map(\.entry).sorted { $0.relativePath < $1.relativePath }
        continuation.yield(IndexBatch(indexID: indexID, sequence: sequence, kind: .gathered, added: all))
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
    }

    func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    /// Waits until every change made to the library before the call is in the index.
    public func sync() async throws(DocumentKitError) {
        try await syncLive()
    }

    /// Stops watching and ends every update sequence.
    public func close() async {
        stopLive()
        for waiter in syncWaiters.values { waiter.resume() }
        syncWaiters = [:]
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }
}
