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
    /// - Throws: ``DocumentKitError`` naming the file: the system's error, `corruptData` (the
    ///   contents or the manifest are malformed), `unsupportedFormat`, `newerFormat` (written by
    ///   a newer version: "format 4, this app reads up to 3"), `incompletePackage` ("3 of 5
    ///   members match"), `migrationFailed`. What was in memory stays, and the file is untouched.
    public func open() async throws(DocumentKitError) {
        let url = fileURL
        let format = self.format
        let opened = try await perform { () throws(DocumentKitError) in
            try self.coordinated(writing: false) { () throws(DocumentKitError) in
                // Conflict copies a sync engine left inside a package are not part of it.
                var tree = try FileWrapper(contentsOf: url).withoutConflictCopies()
                let base = self.baseOfItem(at: url)
                var hasher = MemberHasher()
                var manifested: ManifestedPackage.Opened?
                if let format {
                    let opened = try ManifestedPackage.open(tree, format: format, path: url.path, hasher: &hasher)
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
                return (tree, content, manifested, hasher, base)
            }
        }
        let (tree, content, manifested, hasher, base) = opened
        let readOnlyMessage = manifested?.status.isReadOnly == true ? manifested?.status.message : nil
        state.withLock { state in
            state.content = content
            state.tree = tree
            state.changeCount = 0
            state.savedChangeCount = 0
            state.documentState = readOnlyMessage == nil ? .normal : .editingDisabled
            state.lastSaveError = nil
            state.manifest = manifested?.manifest
            state.formatStatus = manifested?.status
            state.readOnlyMessage = readOnlyMessage
            state.hasher = hasher
            (state.baseIdentifier, state.baseDigest) = base
        }
    }

    /// Saves the current content atomically (see ``FileWrapper/write(to:options:)``).
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
    /// (``lastConflictVersion``). Without a store, that case fails with `changedSinceRead`.
    ///
    /// - Throws: ``DocumentKitError`` naming the file; `readOnlyDocument` for a document that
    ///   may be read but not changed (nothing is written).
    public func save() async throws(DocumentKitError) {
        let url = fileURL
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
        do {
            // The tree, manifest and digests of the previous save are read on the I/O queue, so
            // that saves queued one after the other build on each other.
            try await perform { () throws(DocumentKitError) in
                var (previous, manifest, hasher) = self.state.withLock { ($0.tree, $0.manifest, $0.hasher) }
                var tree: FileWrapper
                do {
                    if let format {
                        var fields = manifest ?? format.makeManifest(writer: writer)
                        tree = try self.fileWrapper(for: content, manifest: &fields, replacing: previous)
                        (tree, fields) = try ManifestedPackage.prepareSave(
                            tree, manifest: fields, format: format, writer: writer, path: url.path, hasher: &hasher)
                        manifest = fields
                    } else {
                        tree = try self.fileWrapper(for: content, replacing: previous)
                    }
                } catch {
                    throw Self.wrap(error, operation: .save, path: url.path)
                }
                let (saved, conflict, base) = try self.coordinated(writing: true) { () throws(DocumentKitError) in
                    try self.write(tree, to: url, options: options)
                }
                previous = saved
                if let members = manifest?.members { hasher.rememberDigests(of: saved, members: members) }
                self.state.withLock { state in
                    state.tree = previous
                    state.manifest = manifest
                    state.hasher = hasher
                    state.formatStatus?.keepsOriginalOnNextSave = false
                    (state.baseIdentifier, state.baseDigest) = base
                    state.lastConflictVersion = conflict
                }
            }
            state.withLock { state in
                state.savedChangeCount = max(state.savedChangeCount, snapshot.1)
                state.documentState.remove(.savingError)
                state.lastSaveError = nil
            }
        } catch {
            state.withLock { state in
                state.documentState.insert(.savingError)
                state.lastSaveError = error
            }
            throw error
        }
    }

    /// Closes the document: saves unsaved changes first (unless `discardingChanges`), then
    /// releases what it holds. Waits for a save that is running.
    ///
    /// - Throws: The save's error; the document then stays open with its edits.
    public func close(discardingChanges: Bool = false) async throws(DocumentKitError) {
        if !discardingChanges && hasUnsavedChanges && !documentState.contains(.closed) {
            try await save()
        }
        _ = try? await perform { () throws(DocumentKitError) in () }  // waits for running I/O
        state.withLock { state in
            state.documentState = .closed
            state.tree = nil
        }
    }
}
