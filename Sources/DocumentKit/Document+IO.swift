#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// How a document runs its I/O: on its own serial queue, inside the caller's coordination
/// context, under a coordinated read or write when it has a coordinator.
extension Document {
    /// Runs `work` on the document's I/O lane, after the work submitted before it, inside the
    /// caller's coordination context (so a save from inside a coordinated write of the document
    /// runs under that write).
    ///
    /// `access`: the coordinated read or write `work` makes of the document's item, taken first,
    /// without holding a thread while it waits (another process's lock, its presenters' answers);
    /// `work`'s own ``coordinated(writing:at:coordinating:_:)`` of that item then runs at once.
    func perform<T: Sendable>(
        coordinating access: LaneAccess? = nil, _ work: @escaping @Sendable () throws(DocumentKitError) -> T
    ) async throws(DocumentKitError) -> T {
        let ticket = io.ticket()
        await io.wait(for: ticket)
        defer { io.leave() }
        let context = CoordinationContext.current
        if let access, !context.isInsideCoordination, let coordinator = ownCoordinator {
            let url = access.url ?? fileURL
            let intent = access.writing ? FileAccessIntent.writingIntent(with: url) : .readingIntent(with: url)
            let result: Result<T, DocumentKitError>
            await CoordinatedIOSlots.shared.take()
            defer { CoordinatedIOSlots.shared.give() }
            do {
                result = try await coordinator.coordinate(with: [intent]) { granted in
                    let held = CoordinationContext.current
                    let grant = LaneGrant(requested: url, writing: access.writing, granted: granted[0].url)
                    return await self.io.onThread {
                        held.run { LaneGrant.$current.withValue(grant) { Self.capture(work) } }
                    }
                }
            } catch {
                throw Self.wrap(error, operation: access.writing ? .save : .open, path: url.path)
            }
            return try result.get()
        }
        let result = await io.onThread { context.run { Self.capture(work) } }
        return try result.get()
    }

    private static func capture<T>(_ work: () throws(DocumentKitError) -> T) -> Result<T, DocumentKitError> {
        do throws(DocumentKitError) { return .success(try work()) } catch { return .failure(error) }
    }

    /// Runs `work` under a coordinated read or write of the document (or of `url`), if it has a
    /// coordinator (and `coordinating`). While the document presents its file, the coordination
    /// works for its presenter, which is then not asked about the document's own reads and writes.
    /// `work` gets the URL the coordinator grants: where the item is now, if it moved while the
    /// coordination waited (see ``itemLocation(requested:granted:)``); else `url` itself.
    func coordinated<T>(
        writing: Bool, at url: URL? = nil, coordinating: Bool = true, _ work: (URL) throws(DocumentKitError) -> T
    ) throws(DocumentKitError) -> T {
        let url = url ?? fileURL
        if let grant = LaneGrant.current, grant.covers(url, writing: writing) { return try work(grant.granted) }
        guard coordinating, let coordinator = ownCoordinator else { return try work(url) }
        do {
            if writing {
                return try coordinator.coordinate(writingItemAt: url) { granted in try work(granted) }
            }
            return try coordinator.coordinate(readingItemAt: url) { granted in try work(granted) }
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw Self.wrap(error, operation: writing ? .save : .open, path: url.path)
        }
    }

    /// ``coordinated(writing:at:coordinating:_:)`` for `work` that does not need the granted URL.
    func coordinated<T>(
        writing: Bool, at url: URL? = nil, coordinating: Bool = true, _ work: () throws(DocumentKitError) -> T
    ) throws(DocumentKitError) -> T {
        try coordinated(writing: writing, at: url, coordinating: coordinating) { (_: URL) throws(DocumentKitError) in try work() }
    }

    /// Where the item asked for at `requested` is, given the URL its coordination `granted`: the
    /// granted one if the item moved while the coordination waited (nothing is left at
    /// `requested`, something is at `granted`), else `requested` (a granted URL that only spells
    /// the same item otherwise, through a symbolic link say, is not a move).
    static func itemLocation(requested: URL, granted: URL) -> URL {
        guard granted.standardizedFileURL.path != requested.standardizedFileURL.path,
            !itemExists(at: requested), itemExists(at: granted)
        else { return requested }
        return granted
    }

    static func itemExists(at url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0
    }

    /// Where an in-place save writes, inside its coordinated write of `requested` (the
    /// document's file when the save began), which the coordinator granted as `granted`:
    /// - the item's new place, if it moved while the save waited; the base the document read
    ///   then is that item's identity at its new place (a rename is not a change of contents);
    /// - nowhere, if the item the document read (it has a base) is gone and the document does
    ///   not know (not ``DocumentState/fileDeleted``): the save fails with `notFound` rather than
    ///   re-create what another program deleted or moved away; the edits stay in memory.
    func placeToSave(requested: URL, granted: URL) throws(DocumentKitError) -> URL {
        let place = Self.itemLocation(requested: requested, granted: granted)
        if mustFindItem && !Self.itemExists(at: place) { throw Self.itemGone(requested) }
        if place != requested { followBase(to: place) }
        return place
    }

    /// Whether a save in place must find the item where it is: the document read it (or saved it)
    /// and does not know it was deleted (``DocumentState/fileDeleted``). Its base may be unknown (an
    /// item moved away just as it was read): the tree it read says it read one.
    var mustFindItem: Bool {
        state.withLock { ($0.base != nil || $0.tree != nil) && !$0.documentState.contains(.fileDeleted) }
    }

    /// The item the document read at `url` is gone: a save does not write it again.
    static func itemGone(_ url: URL) -> DocumentKitError {
        DocumentKitError(
            .notFound, operation: .save, path: url.path,
            detail: "It was deleted, or moved out of its folder, after this document read it; the save does not write it "
                + "again. The edits stay in memory: save them elsewhere (saveAs) to keep them.")
    }

    static func wrap(_ error: any Error, operation: DocumentKitError.Operation, path: String) -> DocumentKitError {
        if let error = error as? DocumentKitError { return error }
        return DocumentKitError(
            .corruptData, operation: operation, path: path, originalIsIntact: true,
            detail: "The contents are not valid", underlyingError: SendableDescription(error))
    }
}

/// Saves against the version the document was based on, keeping versions in its store.
extension Document {
    /// The state of the item on disk now (see ``/FileVersions/ItemState``): its digest with a version store,
    /// its members' identities for a document that can present its file (a `stat` of each
    /// member, which only a presenting document needs).
    func baseOfItem(at url: URL) -> ItemState? {
        let store = versionStore
        let presents = coordinator != nil && presentsFile
        return ItemState.ofItem(at: url, digest: store.map { store in { store.contentDigest(ofItemAt: $0) } }, includingMembers: presents)
    }

    /// After the item moved to `url`: if it is the same file, unmodified, its state there is the
    /// base from now on (a rename is not a change of contents, so the next save is no conflict).
    func followBase(to url: URL) {
        state.withLock { state in
            if let moved = state.base?.moved(to: url) { state.base = moved }
        }
    }

    /// Writes `tree` over the item, inside the document's coordinated write, after the conflict
    /// rule of the layer that keeps versions (``/FileVersions/ItemState/keepingConflict(ofItemAt:since:in:)``):
    /// if the item is no longer the state the document was based on, its contents are first kept
    /// as an unresolved conflict version (or, without a store, the save fails with
    /// `changedSinceRead`). With a store, the replaced version is kept too.
    func write(_ tree: FileWrapper, to url: URL, options: SaveOptions) throws(DocumentKitError)
        -> (FileWrapper, FileVersion?, ItemState?)
    {
        let (store, base) = state.withLock { ($0.versionStore, $0.base) }
        // The item checked for a conflict is the one replaced: never one put in its place, nor
        // the URL written again after the item was moved away meanwhile (by a shell's `mv`).
        let options = try options.replacingItem(at: url)
        if options.itemToReplace == nil && mustFindItem { throw Self.itemGone(url) }
        try requireSameDocument(at: url, fileSystem: options.fileSystem)
        let conflict = try ItemState.keepingConflict(ofItemAt: url, since: base, in: store)
        let (saved, _, newBase) = try write(tree, over: url, options: options)
        return (saved, conflict, newBase)
    }

    /// Writes `tree` at `url` without a conflict check: whatever is there is replaced, and kept in
    /// the version store if there is one (the last step of a save; all of a save as).
    func write(_ tree: FileWrapper, over url: URL, options: SaveOptions) throws(DocumentKitError)
        -> (FileWrapper, FileVersion?, ItemState?)
    {
        let saved: FileWrapper
        if let store = versionStore {
            saved = try store.save(tree, to: url, options: options, keepingReplacedAs: .save).saved
        } else {
            saved = try tree.write(to: url, options: options)
        }
        return (saved, nil, baseOfItem(at: url))
    }
}
