import Dispatch
import Foundation
import Synchronization

/// Reading, saving and closing a document.
extension Document {
    /// Reads the document from disk, replacing what is in memory.
    ///
    /// With a ``format``, the format's rules apply first (see ``format``): a document that
    /// can't be opened is an error, and one that may only be read opens with
    /// ``DocumentState/editingDisabled``.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the file: the system's error, `corruptData` (the
    ///   contents or the manifest are malformed), `unsupportedFormat`, `newerFormat` (written by
    ///   a newer version: "format 4, this app reads up to 3"), `incompletePackage` ("3 of 5
    ///   members match", and something in it changed within ``packageSettlePeriod``: a sync may
    ///   still be delivering it), `modifiedPackage` (the same, settled: another program edited it;
    ///   see ``acceptMembersOnDisk()``), both with ``/DocumentKitSystem/DocumentKitError/lastCompleteVersionPath``
    ///   when the store has a whole version, `migrationFailed`. What was in memory stays, and the
    ///   file is untouched.
    ///
    /// With a ``coordinator``, the open document presents its file until ``close(discardingChanges:)``:
    /// it reloads after other programs' writes, keeps them as conflict versions when it has unsaved
    /// changes, follows moves and notes deletions (``DocumentEvent/reloaded``,
    /// ``DocumentEvent/conflictGained(_:)``, ``DocumentEvent/moved(to:)``, ``DocumentEvent/deleted``),
    /// and saves its changes before another coordinator reads the file. Without one it presents nothing.
    public func open() async throws(DocumentKitError) {
        let reading = try await perform(coordinating: .reading(fileURL)) { [fileURL] () throws(DocumentKitError) in
            do throws(DocumentKitError) { return try self.readItem(at: fileURL) } catch { throw self.withLastCompleteVersion(error) }
        }
        // An open that waited while a program moved the file read it at its new place.
        location.withLock { $0 = reading.url }
        let url = reading.url
        apply(reading, keeping: [])
        lifecycle.withLock { $0.firstUnsavedChange = nil }
        if let store = versionStore, let conflicts = unresolvedConflictCount(in: store, ofItemAt: url, read: reading), conflicts > 0 {
            changeState { $0.insert(.inConflict) }
        }
        startPresenting()
        post(.opened)
    }

    /// The number of unresolved conflict versions of the item just read: by the document
    /// identifier its manifest named, when the store reads the same manifest (no second read of
    /// it), else as the store finds the item.
    func unresolvedConflictCount(in store: VersionStore, ofItemAt url: URL, read reading: Reading) -> Int? {
        if let opened = reading.manifested, let format, store.manifestName == format.manifestName {
            // The manifest as it is on disk, as the store reads it (not as a migration left it in memory).
            return try? store.unresolvedConflictCount(ofDocumentIdentifier: opened.status.manifestOnDisk.documentIdentifier)
        }
        return try? store.unresolvedConflictCount(ofItemAt: url)
    }

    /// What one read of the document's item gave: read by ``readItem(at:)``, taken in by
    /// ``apply(_:keeping:)``.
    struct Reading: Sendable {
        var tree: FileWrapper
        var content: Content
        var manifested: ManifestedPackage.Opened?
        var hasher: MemberHasher
        var base: ItemState?
        /// Where the item was read: where it is now, if it moved while the read waited.
        var url: URL
    }

    /// Reads the item at `url` under a coordinated read (on the I/O queue): `open()`'s reading,
    /// and a reload's. Changes nothing in the document. Follows a move made while the read waited.
    /// (`open()` names the newest whole version of a package refused as incomplete or modified,
    /// ``/DocumentKitSystem/DocumentKitError/lastCompleteVersionPath``; a reload, which only looks again at the next
    /// change, does not look for it.)
    func readItem(at requested: URL) throws(DocumentKitError) -> Reading {
        let format = self.format
        let settlePeriod = packageSettlePeriod
        let digestCache = memberDigestCache
        return try coordinated(writing: false, at: requested) { (granted: URL) throws(DocumentKitError) in
            let url = Self.itemLocation(requested: requested, granted: granted)
            // Conflict copies a sync engine left inside a package are not part of it.
            var tree = try self.readTree(at: url, fileSystem: self.saveOptions.fileSystem)
            let base = self.baseOfItem(at: url)
            var hasher = MemberHasher(digestCache: digestCache)
            var manifested: ManifestedPackage.Opened?
            if let format {
                let opened = try ManifestedPackage.open(tree, format: format, path: url.path, hasher: &hasher, settlePeriod: settlePeriod)
                tree = opened.tree
                manifested = opened
            }
            let content: Content
            do {
                if let manifested {
                    content = try self.read(from: tree, manifest: manifested.manifest)
                } else {
                    content = try self.read(from: tree)
                }
            } catch {
                throw Self.wrap(error, operation: .open, path: url.path)
            }
            return Reading(tree: tree, content: content, manifested: manifested, hasher: hasher, base: base, url: url)
        }
    }

    /// Replaces what is in memory with `reading`: the content is then the file's (no unsaved
    /// changes), based on the state read. Of the document's state, only `keeping` survives
    /// (besides `editingDisabled` for a read-only file). Returns the state before and after, or
    /// nil if `ifClean` and the document has unsaved changes (nothing is changed then).
    @discardableResult
    func apply(_ reading: Reading, keeping: DocumentState, ifClean: Bool = false) -> (DocumentState, DocumentState)? {
        let readOnlyMessage = reading.manifested?.status.isReadOnly == true ? reading.manifested?.status.message : nil
        return state.withLock { state -> (DocumentState, DocumentState)? in
            if ifClean && state.changeCount != state.savedChangeCount { return nil }
            let before = state.documentState
            state.content = reading.content
            state.tree = reading.tree
            state.changeCount = 0
            state.savedChangeCount = 0
            state.documentState = before.intersection(keeping).union(readOnlyMessage == nil ? .normal : .editingDisabled)
            state.lastSaveError = nil
            state.manifest = reading.manifested?.manifest
            state.formatStatus = reading.manifested?.status
            state.readOnlyMessage = readOnlyMessage
            state.hasher = reading.hasher
            state.base = reading.base
            state.earlierIDs.removeAll()
            state.undoneIDs.removeAll()
            return (before, state.documentState)
        }
    }

    /// Saves the current content over the document's file, atomically (see
    /// ``/FilePackages/FileWrapper/write(to:options:)``): ``save(to:for:)`` with ``SaveOperation/save``.
    ///
    /// Edits made while the save runs stay unsaved changes. A failed save leaves the file on
    /// disk as it was and the edits in memory; ``documentState`` then contains `savingError`.
    ///
    /// With a ``format``, the save writes the manifest last, inside the new tree: an older
    /// document is written in this app's version, a newer one keeps its version and everything
    /// this app doesn't understand.
    ///
    /// With a ``versionStore``, the version the save replaces is kept in it (so an older
    /// document's original survives its migration), and if another process saved the file since
    /// this document read or wrote it, that state is first kept as an unresolved conflict version
    /// (``lastConflictVersion``; the document is then ``DocumentState/inConflict``). Without a
    /// store, that case fails with `changedSinceRead`.
    ///
    /// A save that waited for another process's coordinated access while a program moved the
    /// file writes it at its new place (``fileURL`` follows, ``DocumentEvent/moved(to:)``). A save
    /// never writes again a file that was deleted (or moved out of its folder) after the document
    /// read it: it fails with `notFound` and the edits stay in memory; only a document that knows
    /// of the deletion (``DocumentState/fileDeleted``, see ``open()``) writes the file again.
    ///
    /// A copy of another document (`cp -a` of a package) takes a document identifier of its own
    /// at its first save, so that its versions don't join the original's history (see
    /// <doc:FormatVersioning>, "A copy is a new document").
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the file; `readOnlyDocument` for a document that
    ///   may be read but not changed (nothing is written); `notFound` for a file deleted since
    ///   the document read it.
    public func save() async throws(DocumentKitError) {
        try await save(to: fileURL, for: .save)
    }

    /// Saves the content as `operation` says, as `NSDocument.save(to:ofType:for:)`:
    /// - ``SaveOperation/save`` and ``SaveOperation/autosaveInPlace``: over the document's file
    ///   (`url` must be ``fileURL``), as ``save()`` describes;
    /// - ``SaveOperation/saveAs``: to `url`, which becomes the document's file (a file there is
    ///   replaced, and kept in the version store if there is one);
    /// - ``SaveOperation/saveTo``: a copy at `url`, a new document with an identifier of its own
    ///   (with a ``format``); the document, its file and its unsaved changes stay as they were;
    /// - ``SaveOperation/autosaveElsewhere``: like `saveTo`, for drafts (``autosavedContentsURL``).
    ///
    /// Every save is atomic and coordinated; the changes counted when it started are marked
    /// saved when it ends (see ``changeCountToken()``). Events: ``DocumentEvent/saved(_:)`` or
    /// ``DocumentEvent/saveFailed(_:_:)``.
    public func save(to url: URL, for operation: SaveOperation) async throws(DocumentKitError) {
        try await save(to: url, for: operation, coordinating: true)
    }

    /// ``save(to:for:)``; `coordinating: false` writes without a coordinated write, for a save
    /// asked for by a coordinator that holds the item on the document's behalf (see
    /// `DocumentPresenter.savePresentedItemChanges()`).
    func save(to url: URL, for operation: SaveOperation, coordinating: Bool) async throws(DocumentKitError) {
        let inPlace = operation == .save || operation == .autosaveInPlace
        let options = saveOptions
        let format = self.format
        let writer = self.writer
        let snapshot = state.withLock { state -> (Content?, Int, Bool, String?) in
            (state.content, state.changeCount, state.documentState.contains(.closed), state.readOnlyMessage)
        }
        guard let content = snapshot.0, !snapshot.2 else {
            throw DocumentKitError(.invalidArgument, operation: .save, path: url.path, detail: "The document is not open.")
        }
        if let message = snapshot.3 {
            throw DocumentKitError(.readOnlyDocument, operation: .save, path: url.path, originalIsIntact: true, detail: message)
        }
        if inPlace && url.standardizedFileURL != fileURL.standardizedFileURL {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: url.path,
                detail: "A \(operation.rawValue) writes the document's own file (\(fileURL.path)); use saveAs or saveTo for another place.")
        }
        let token = ChangeCountToken(count: snapshot.1)
        let marksSaved = inPlace || operation == .saveAs
        if marksSaved { lifecycle.withLock { $0.savesInFlight.append(token.count) } }
        defer {
            if marksSaved {
                lifecycle.withLock { lifecycle in
                    if let index = lifecycle.savesInFlight.firstIndex(of: token.count) { lifecycle.savesInFlight.remove(at: index) }
                }
                if hasUnsavedChanges && !documentState.contains(.closed) { scheduleAutosave(keepingTimes: true) }
            }
        }
        var conflict: FileVersion?
        do {
            // The tree, manifest and digests of the previous save are read on the I/O queue, so
            // that saves queued one after the other build on each other.
            conflict = try await perform(coordinating: coordinating ? .writing(url) : nil) { () throws(DocumentKitError) -> FileVersion? in
                var (previous, manifest, hasher) = self.state.withLock { ($0.tree, $0.manifest, $0.hasher) }
                // A copy of another live document gets an identity of its own at its first save
                // in place (Document+Identity.swift); a copy saved elsewhere gets one at once.
                let ownIdentity = inPlace && format != nil ? self.identityOfCopy(at: url) : nil
                var tree: FileWrapper
                do {
                    if let format {
                        var fields = manifest ?? format.makeManifest(writer: writer)
                        tree = try self.fileWrapper(for: content, manifest: &fields, replacing: previous)
                        if operation == .saveTo, let identifier = manifest?.documentIdentifier, fields.documentIdentifier == identifier {
                            fields.documentIdentifier = UUID().uuidString
                        }
                        self.applyOwnIdentity(ownIdentity, to: &fields)
                        (tree, fields) = try ManifestedPackage.prepareSave(
                            tree, manifest: fields, format: format, writer: writer, path: url.path, hasher: &hasher)
                        manifest = fields
                    } else {
                        tree = try self.fileWrapper(for: content, replacing: previous)
                    }
                } catch {
                    throw Self.wrap(error, operation: .save, path: url.path)
                }
                // A document stored as one archive writes the archive of its tree.
                let stored = try self.storedForm(of: tree, path: url.path)
                switch operation {
                case .save, .autosaveInPlace, .saveAs:
                    let (saved, conflict, base, place) = try self.coordinated(writing: true, at: url, coordinating: coordinating) {
                        (granted: URL) throws(DocumentKitError) in
                        if operation == .saveAs {
                            let (saved, conflict, base) = try self.write(stored, over: url, options: options)
                            return (saved, conflict, base, url)
                        }
                        // The item's place now: it may have moved while the save waited.
                        let place = try self.placeToSave(requested: url, granted: granted)
                        if let ownIdentity, let format { try self.takeOwnIdentity(ownIdentity, at: place, format: format, options: options) }
                        let (saved, conflict, base) = try self.write(stored, to: place, options: options)
                        return (saved, conflict, base, place)
                    }
                    if self.archiveFormat != nil {
                        previous = try self.treeAfterSave(saved, at: place, members: manifest?.members, fileSystem: options.fileSystem)
                    } else {
                        previous = saved
                    }
                    if self.archiveFormat == nil, let members = manifest?.members {
                        hasher.rememberDigests(of: saved, members: members)
                        // The save's links changed the members' change times: the next process
                        // finds them in the digest cache by their new identities (a cache, not a
                        // step of the save: its calls are not the save's, nor its faults).
                        hasher.recordSavedDigests(ofPackageAt: place.path, members: members, using: .live)
                    }
                    self.state.withLock { state in
                        state.tree = previous
                        state.manifest = manifest
                        state.hasher = hasher
                        state.formatStatus?.keepsOriginalOnNextSave = false
                        state.base = base
                        state.lastConflictVersion = conflict
                    }
                    if let identifier = manifest?.documentIdentifier, let identity = saved.savedIdentity {
                        LastSavedItems.remember(identity, for: identifier)
                    }
                    let followedMove = inPlace && place != url
                    if operation == .saveAs || followedMove { self.location.withLock { $0 = place } }
                    if followedMove { self.post(.moved(to: place)) }
                    self.presenterDidSave(movedTo: operation == .saveAs || followedMove)
                    return conflict
                case .saveTo, .autosaveElsewhere:
                    // A draft is the user's alone: 0600 (a package 0700), whatever the document's mode.
                    var written = stored
                    if operation == .autosaveElsewhere { written.permissions = written.isDirectory ? 0o700 : 0o600 }
                    _ = try self.coordinated(writing: true, at: url) { () throws(DocumentKitError) in
                        try written.write(to: url, options: options)
                    }
                    if operation == .autosaveElsewhere { self.lifecycle.withLock { $0.autosavedContentsURL = url } }
                    return nil
                }
            }
        } catch {
            state.withLock { $0.lastSaveError = error }
            changeState { $0.insert(.savingError) }
            Self.logAutosaveFailure(operation, error)
            post(.saveFailed(operation, error))
            throw error
        }
        updateChangeCount(withToken: token, for: operation)
        state.withLock { $0.lastSaveError = nil }
        changeState {
            $0.remove(.savingError)
            if inPlace || operation == .saveAs { $0.remove(.fileDeleted) }
            if conflict != nil { $0.insert(.inConflict) }
        }
        if let conflict { post(.conflictGained(conflict)) }
        post(.saved(operation))
        if inPlace || operation == .saveAs { removeDraftAfterSave() }  // Recovery/
    }

    /// Closes the document: saves unsaved changes first (unless `discardingChanges`), then
    /// releases what it holds: autosave stops, the event streams end. Waits for a save that is
    /// running.
    ///
    /// - Throws: The save's error; the document then stays open with its edits.
    public func close(discardingChanges: Bool = false) async throws(DocumentKitError) {
        if !discardingChanges && hasUnsavedChanges && !documentState.contains(.closed) {
            try await save()
        }
        let autosave = lifecycle.withLock { lifecycle -> Task<Void, Never>? in
            defer { lifecycle.autosaveTask = nil }
            return lifecycle.autosaveTask
        }
        autosave?.cancel()
        _ = try? await perform { () throws(DocumentKitError) in () }  // waits for running I/O
        stopPresenting()
        state.withLock { state in
            state.tree = nil
        }
        changeState { $0 = .closed }
        endRecoveryData(discardingChanges: discardingChanges)  // Recovery/
        post(.closed)
        let subscribers = lifecycle.withLock { lifecycle -> [AsyncStream<DocumentEvent>.Continuation] in
            defer { lifecycle.subscribers.removeAll() }
            return Array(lifecycle.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
