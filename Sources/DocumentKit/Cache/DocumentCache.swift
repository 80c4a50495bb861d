#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// The open documents of a long-running process: opened on demand, closed when idle or when
/// there are too many, and never two `Document` objects for one file.
///
/// ```swift
/// let cache = DocumentCache<Note, NoteDocument>(capacity: 500, idleTimeout: .seconds(300)) { url in
///     try await NoteDocument.open(at: url, coordinator: coordinator)
/// }
/// let title = try await cache.withDocument(at: url) { note in
///     try note.update { $0.body += "\nOne more line" }
///     return note.content.title
/// }
/// await cache.closeAll()   // at shutdown: saves what is unsaved
/// ```
///
/// - One object per file: documents are known by the file's real path (symbolic links on the way
///   resolved), so two URLs of one file give the same object, and concurrent first uses of a
///   file open it once. A document another program moves is found at its new place (its
///   ``Document/fileURL`` follows the move).
/// - A document is pinned while a ``withDocument(at:_:)`` body uses it: never closed or evicted
///   then.
/// - Beyond `capacity` open documents, those used least recently (and not pinned) are closed;
///   so is any document unused for `idleTimeout`. Closing saves unsaved changes
///   (``Document/close(discardingChanges:)``); a document whose save fails stays open, with its
///   edits, and is tried again later.
/// - ``closeAll()`` closes everything (for shutdown, on `SIGTERM`).
///
/// See <doc:LongRunningProcesses> for what each open document costs.
public actor DocumentCache<Content: Sendable, CachedDocument: Document<Content>> {
    /// How a document is opened: usually `CachedDocument.open(at:coordinator:)`.
    public typealias Opener = @Sendable (URL) async throws -> CachedDocument

    private struct Entry {
        var opening: Task<CachedDocument, any Error>
        var document: CachedDocument?
        var pins = 0
        var lastUse: ContinuousClock.Instant
    }

    /// What the cache did, for tests and diagnostics.
    public struct Statistics: Sendable, Equatable {
        /// Documents opened.
        public var opened = 0
        /// Documents closed (evicted, idle, or by ``closeAll()``).
        public var closed = 0
        /// Closes that failed (the document stayed open).
        public var failedCloses = 0
    }

    /// How many documents it keeps open at most (more only while pinned).
    public let capacity: Int
    /// How long an unused document stays open.
    public let idleTimeout: Duration
    private let opener: Opener
    private var entries: [String: Entry] = [:]
    /// Documents being closed, by key: a new use waits for the close before it opens the file again.
    private var closing: [String: Task<Void, Never>] = [:]
    private var sweeper: Task<Void, Never>?
    /// What the cache did.
    public private(set) var statistics = Statistics()

    /// A cache keeping at most `capacity` documents open, closing those unused for
    /// `idleTimeout`; `open` opens a document.
    public init(capacity: Int, idleTimeout: Duration, open: @escaping Opener) {
        self.capacity = max(1, capacity)
        self.idleTimeout = idleTimeout
        self.opener = open
    }

    /// How many documents are open (or opening).
    public var count: Int { entries.count }

    /// Runs `body` with the document at `url`, opened if it is not open yet; it stays open (pinned)
    /// until `body` returns.
    ///
    /// - Throws: What opening the document throws, or what `body` throws.
    public nonisolated func withDocument<T: Sendable>(
        at url: URL, _ body: (CachedDocument) async throws -> T
    ) async throws -> T {
        let (key, document) = try await checkOut(url)
        do {
            let result = try await body(document)
            await checkIn(key)
            return result
        } catch {
            await checkIn(key)
            throw error
        }
    }

    /// Closes every document (saving unsaved changes) and stops the idle sweep; documents pinned
    /// now are closed once their bodies return... after this call returns (use it when nothing
    /// else uses the cache: at shutdown). The cache may be used again afterwards.
    ///
    /// - Throws: The first error a close threw (every document was tried; those that failed stay open).
    public func closeAll() async throws {
        sweeper?.cancel()
        sweeper = nil
        for task in closing.values { await task.value }
        var firstError: (any Error)?
        for key in Array(entries.keys) {
            guard let entry = entries[key] else { continue }
            guard let document = try? await entry.opening.value else {
                entries.removeValue(forKey: key)
                continue
            }
            do {
                try await document.close()
                statistics.closed += 1
                entries.removeValue(forKey: key)
            } catch {
                statistics.failedCloses += 1
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }

    // MARK: Checking out and in

    private func checkOut(_ url: URL) async throws -> (String, CachedDocument) {
        let key = Self.key(of: url)
        if let pending = closing[key] { await pending.value }
        let found = entries[key] != nil ? key : rekeyMoved(to: key)
        if let found, var entry = entries[found] {
            entry.pins += 1
            entry.lastUse = .now
            entries[found] = entry
            do { return (found, try await entry.opening.value) } catch {
                unpin(found)
                throw error
            }
        }
        let opener = self.opener
        let opening = Task { try await opener(url) }
        entries[key] = Entry(opening: opening, pins: 1, lastUse: .now)
        startSweeping()
        do {
            let document = try await opening.value
            statistics.opened += 1
            entries[key]?.document = document
            return (key, document)
        } catch {
            entries.removeValue(forKey: key)
            throw error
        }
    }

    private func checkIn(_ key: String) {
        unpin(key)
        evictBeyondCapacity()
    }

    private func unpin(_ key: String) {
        guard var entry = entries[key] else { return }
        entry.pins -= 1
        entry.lastUse = .now
        entries[key] = entry
    }

    /// The key of an entry whose document moved to the file known as `key` (re-keyed), if any.
    private func rekeyMoved(to key: String) -> String? {
        for (old, entry) in entries {
            guard let document = entry.document, Self.key(of: document.fileURL) == key, old != key else { continue }
            entries.removeValue(forKey: old)
            entries[key] = entry
            return key
        }
        return nil
    }

    // MARK: Closing

    private func evictBeyondCapacity() {
        guard entries.count > capacity else { return }
        let unpinned = entries.filter { $0.value.pins == 0 && $0.value.document != nil }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (key, _) in unpinned.prefix(entries.count - capacity) { close(key) }
    }

    private func closeIdle() {
        let now = ContinuousClock.now
        for (key, entry) in entries where entry.pins == 0 && entry.document != nil && now - entry.lastUse >= idleTimeout {
            close(key)
        }
    }

    /// Closes the document of `key` (unpinned, open), saving unsaved changes; if that fails it
    /// stays in the cache, as recently used.
    private func close(_ key: String) {
        guard let entry = entries.removeValue(forKey: key), let document = entry.document else { return }
        closing[key] = Task {
            do {
                try await document.close()
                self.didClose(key, nil)
            } catch {
                self.didClose(key, (entry, error))
            }
        }
    }

    private func didClose(_ key: String, _ failure: (Entry, any Error)?) {
        closing.removeValue(forKey: key)
        guard let (entry, error) = failure else {
            statistics.closed += 1
            return
        }
        statistics.failedCloses += 1
        logger.warning("Closing \(entry.document?.fileURL.path ?? key) failed, so it stays open: \(error)")
        var kept = entry
        kept.lastUse = .now
        if entries[key] == nil { entries[key] = kept }
    }

    private func startSweeping() {
        guard sweeper == nil else { return }
        let interval = max(idleTimeout / 4, .milliseconds(10))
        sweeper = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                await self.closeIdle()
            }
        }
    }

    deinit { sweeper?.cancel() }

    // MARK: Keys

    /// The file's real path: symbolic links resolved (for a file not there, its folder's, with its name).
    static func key(of url: URL) -> String {
        var path = url.standardizedFileURL.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let folder = (path as NSString).deletingLastPathComponent
        guard let resolved = realpath(folder.isEmpty ? "." : folder, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved) + "/" + (path as NSString).lastPathComponent
    }
}

private let logger = Logger(label: "DocumentKit.cache")
