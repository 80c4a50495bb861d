#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Foundation
import Synchronization

/// Crash recovery: drafts a document autosaves elsewhere survive the process, as recovery data.
///
/// A document that autosaves elsewhere (a new one, or one whose policy doesn't autosave in
/// place) owns one draft entry in ``autosaveDraftsFolder`` for as long as it is open, holding a
/// lock on it (as KDE's `KAutoSaveFile`); each autosave replaces the entry's draft. The entry is
/// deleted after the next successful save in place (when no changes are left unsaved), by
/// ``discardRecoveryData()`` and by ``close(discardingChanges:)`` with `true`; it stays when the
/// process dies, and ``recoverable(in:)`` then lists it.
extension Document {
    /// The drafts of this class's documents whose owner process is gone (crashed, killed, or
    /// dropped the document without closing it), oldest first: what can be restored with
    /// ``open(recovering:)``. Drafts a live process owns are not listed; damaged entries are
    /// skipped (and logged; ``RecoverableDraft/scan(_:)`` reports them).
    ///
    /// - Parameter folder: The drafts folder; nil looks in ``defaultAutosaveDraftsFolder``.
    public static func recoverable(in folder: URL? = nil) -> [RecoverableDraft] {
        let typeName = String(describing: self)
        return RecoverableDraft.scan(folder ?? defaultAutosaveDraftsFolder).drafts.filter { $0.documentTypeName == typeName }
    }

    /// Opens the document with a leftover draft's content as unsaved changes: reads the
    /// document's file if it exists (as ``open()``), then the draft (with ``read(from:)``, or
    /// ``read(from:manifest:)`` for a format), and marks the draft's content as a change. The
    /// document takes the draft over: it is kept (and a later crash leaves it again) until the
    /// app saves the document, or discards it (``discardRecoveryData()``).
    ///
    /// - Throws: ``DocumentKitError``: `invalidArgument` if `draft` belongs to another file than
    ///   ``fileURL``; `busy` if a live process owns the draft; the errors of ``open()``, for the
    ///   file or for the draft.
    public func open(recovering draft: RecoverableDraft) async throws(DocumentKitError) {
        guard draft.documentURL.standardizedFileURL.path == fileURL.standardizedFileURL.path else {
            throw DocumentKitError(
                .invalidArgument, operation: .recover, path: draft.entryURL.path,
                detail: "The draft belongs to \(draft.documentURL.path), not \(fileURL.path).")
        }
        let entry = try DraftEntry.adopt(draft)
        if FileManager.default.fileExists(atPath: fileURL.path) { try await open() }
        let content = try await readDraft(at: draft.draftURL)
        let count = try state.withLock { state throws(DocumentKitError) -> Int in
            if let message = state.readOnlyMessage {
                throw DocumentKitError(.readOnlyDocument, operation: .recover, path: fileURL.path, originalIsIntact: true, detail: message)
            }
            if state.content == nil { state.documentState = .normal }
            state.content = content
            Self.count(.done, in: &state)
            return state.changeCount
        }
        let previous = lifecycle.withLock { lifecycle -> DraftEntry? in
            defer {
                lifecycle.draft = entry
                lifecycle.autosavedContentsURL = draft.draftURL
                lifecycle.draftedChangeCount = count  // the draft holds this content already
            }
            return lifecycle.draft
        }
        previous?.remove()
        scheduleAutosave()
    }

    /// Opens the document `draft` belongs to with the draft's content as unsaved changes; see
    /// the instance method ``open(recovering:)``.
    public class func open(
        recovering draft: RecoverableDraft, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil
    ) async throws(DocumentKitError) -> Self {
        let document = Self(fileURL: draft.documentURL, saveOptions: saveOptions, coordinator: coordinator)
        try await document.open(recovering: draft)
        return document
    }

    /// Deletes the document's draft (its recovery data), if it has one. The changes stay in
    /// memory; the next autosave elsewhere writes a new draft.
    public func discardRecoveryData() {
        let entry = lifecycle.withLock { lifecycle -> DraftEntry? in
            defer {
                lifecycle.draft = nil
                lifecycle.autosavedContentsURL = nil
                lifecycle.draftedChangeCount = nil
            }
            return lifecycle.draft
        }
        entry?.remove()
    }

    /// The draft's entry of the document, created the first time.
    func draftEntry() throws(DocumentKitError) -> DraftEntry {
        if let entry = lifecycle.withLock({ $0.draft }) { return entry }
        let entry = try DraftEntry.create(in: autosaveDraftsFolder, for: fileURL)
        let winner = lifecycle.withLock { lifecycle -> DraftEntry in
            if let existing = lifecycle.draft { return existing }
            lifecycle.draft = entry
            return entry
        }
        if winner !== entry { entry.remove() }
        return winner
    }

    /// An autosave elsewhere: the record, then the draft, in the document's entry.
    func autosaveToDraft() async throws(DocumentKitError) {
        let entry = try draftEntry()
        try entry.writeInfo(
            DraftInfo(
                document: fileURL.standardizedFileURL.path, documentType: String(describing: type(of: self)),
                date: DraftInfo.dateString(Date()), ownerPID: getpid(), host: DraftInfo.hostName, draft: entry.draftName))
        let token = changeCountToken()
        try await save(to: entry.draftURL, for: .autosaveElsewhere)
        lifecycle.withLock { $0.draftedChangeCount = token.count }
    }

    /// After a successful save of the document's own file: its draft goes, unless changes made
    /// since are still unsaved (the draft may hold them; the next save or autosave deals with it).
    func removeDraftAfterSave() {
        guard !hasUnsavedChanges else { return }
        discardRecoveryData()
    }

    /// At close: the draft goes when the changes were saved or discarded.
    func endRecoveryData(discardingChanges: Bool) {
        if discardingChanges || !hasUnsavedChanges {
            discardRecoveryData()
        } else {
            let entry = lifecycle.withLock { lifecycle -> DraftEntry? in
                defer { lifecycle.draft = nil }
                return lifecycle.draft
            }
            entry?.release()
        }
    }

    /// Reads the draft at `url` into content, as ``open()`` reads the file, without changing
    /// the document.
    func readDraft(at url: URL) async throws(DocumentKitError) -> Content {
        let format = self.format
        return try await perform { () throws(DocumentKitError) -> Content in
            let tree = try FileWrapper(contentsOf: url).withoutConflictCopies()
            var hasher = MemberHasher()
            do {
                if let format {
                    let opened = try ManifestedPackage.open(tree, format: format, path: url.path, hasher: &hasher)
                    return try self.read(from: opened.tree, manifest: opened.manifest)
                }
                return try self.read(from: tree)
            } catch {
                throw Self.wrap(error, operation: .recover, path: url.path)
            }
        }
    }
}
