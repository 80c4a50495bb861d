#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Logging
import Synchronization

/// Crash recovery: drafts a document autosaves elsewhere survive the process, as recovery data.
///
/// A document that autosaves elsewhere (a new one, or one whose policy doesn't autosave in
/// place) owns one draft entry in ``autosaveDraftsFolder`` for as long as it is open, holding a
/// lock on it (as KDE's `KAutoSaveFile`); each autosave replaces the entry's draft. The entry is
/// deleted after the next successful save in place (when no changes are left unsaved), by
/// ``discardRecoveryData()`` and by ``close(discardingChanges:)`` with `true`; it stays when the
/// process dies, and ``recoverable(in:using:)`` then lists it.
extension Document {
    /// The drafts of this class's documents whose owner process is gone (crashed, killed, or
    /// dropped the document without closing it), oldest first: what can be restored with
    /// ``open(recovering:)``. Drafts a live process owns are not listed; damaged entries are
    /// skipped (and logged; ``RecoverableDraft/scan(_:using:)`` reports them).
    ///
    /// - Parameters:
    ///   - folder: The drafts folder; nil looks in ``defaultAutosaveDraftsFolder``.
    ///   - fileSystem: The system-call seam.
    public static func recoverable(in folder: URL? = nil, using fileSystem: FileSystem = .live) -> [RecoverableDraft] {
        let typeName = String(describing: self)
        return RecoverableDraft.scan(folder ?? defaultAutosaveDraftsFolder, using: fileSystem).drafts.filter { $0.documentTypeName == typeName }
    }

    /// Opens the document with a leftover draft's content as unsaved changes: reads the
    /// document's file if it exists (as ``open()``), then the draft (with ``read(from:)``, or
    /// ``read(from:manifest:)`` for a format), and marks the draft's content as a change. The
    /// document takes the draft over: it is kept (and a later crash leaves it again) until the
    /// app saves the document, or discards it (``discardRecoveryData()``).
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `invalidArgument` if `draft` belongs to another file than
    ///   ``fileURL``; `busy` if a live process owns the draft; the errors of ``open()``, for the
    ///   file or for the draft.
    public func open(recovering draft: RecoverableDraft) async throws(DocumentKitError) {
        guard draft.documentURL.standardizedFileURL.path == fileURL.standardizedFileURL.path else {
            throw DocumentKitError(
                .invalidArgument, operation: .recover, path: draft.entryURL.path,
                detail: "The draft belongs to \(draft.documentURL.path), not \(fileURL.path).")
        }
        let fileSystem = saveOptions.fileSystem
        let entry = try DraftEntry.adopt(draft, using: fileSystem)
        let exists: Bool
        do {
            _ = try fileSystem.status(of: fileURL.path, in: AT_FDCWD, followingLink: true)
            exists = true
        } catch {
            exists = error != .noSuchFileOrDirectory  // open() then reports the error
        }
        if exists { try await open() }
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
        if let previous { Self.remove(previous, operation: .recover) }
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
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the item and the step that failed. The document
    ///   then keeps the entry (and its lock), no longer claiming it holds the changes: the next
    ///   save, autosave elsewhere, discard or close deals with it again.
    public func discardRecoveryData() throws(DocumentKitError) {
        try discardRecoveryData(operation: .remove)
    }

    func discardRecoveryData(operation: DocumentKitError.Operation) throws(DocumentKitError) {
        let entry = lifecycle.withLock { lifecycle -> DraftEntry? in
            // Whatever happens next, the draft no longer holds the changes.
            lifecycle.autosavedContentsURL = nil
            lifecycle.draftedChangeCount = nil
            return lifecycle.draft
        }
        guard let entry else { return }
        try entry.remove(operation: operation)
        lifecycle.withLock { lifecycle in
            if lifecycle.draft === entry { lifecycle.draft = nil }
        }
    }

    /// Removes `entry`, logging a failure (the entry is then left over, for a later scan).
    static func remove(_ entry: DraftEntry, operation: DocumentKitError.Operation) {
        do { try entry.remove(operation: operation) } catch {
            recoveryLogger.warning("\(error)")
            entry.release()
        }
    }

    /// The draft's entry of the document, created the first time.
    func draftEntry() throws(DocumentKitError) -> DraftEntry {
        if let entry = lifecycle.withLock({ $0.draft }) { return entry }
        let entry = try DraftEntry.create(in: autosaveDraftsFolder, for: fileURL, using: saveOptions.fileSystem)
        let winner = lifecycle.withLock { lifecycle -> DraftEntry in
            if let existing = lifecycle.draft { return existing }
            lifecycle.draft = entry
            return entry
        }
        if winner !== entry { Self.remove(entry, operation: .save) }
        return winner
    }

    /// An autosave elsewhere: the record, then the draft, in the document's entry. A failure
    /// of either is reported as a failed save (``lastSaveError``, `savingError`,
    /// ``DocumentEvent/saveFailed(_:_:)``); the draft then no longer claims to hold the changes.
    func autosaveToDraft() async throws(DocumentKitError) {
        let token = changeCountToken()
        let entry: DraftEntry
        do {
            entry = try draftEntry()
            // The draft is about to change: until it holds these changes, it holds none for sure.
            lifecycle.withLock { $0.draftedChangeCount = nil }
            try entry.writeInfo(
                DraftInfo(
                    document: fileURL.standardizedFileURL.path, documentType: String(describing: type(of: self)),
                    date: DraftInfo.dateString(Date()), ownerPID: getpid(), host: DraftInfo.hostName, draft: entry.draftName),
                durability: saveOptions.durability)
        } catch {
            state.withLock { $0.lastSaveError = error }
            changeState { $0.insert(.savingError) }
            Self.logAutosaveFailure(.autosaveElsewhere, error)
            post(.saveFailed(.autosaveElsewhere, error))
            throw error
        }
        try await save(to: entry.draftURL, for: .autosaveElsewhere)
        lifecycle.withLock { $0.draftedChangeCount = token.count }
    }

    /// After a successful save of the document's own file: its draft goes, unless changes made
    /// since are still unsaved (the draft may hold them; the next save or autosave deals with it).
    /// A failure to delete it doesn't fail the save (the file is saved): it is logged and kept in
    /// ``lastSaveError``.
    func removeDraftAfterSave() {
        guard !hasUnsavedChanges else { return }
        do { try discardRecoveryData(operation: .save) } catch {
            recoveryLogger.warning("\(error)")
            state.withLock { $0.lastSaveError = error }
        }
    }

    /// At close: the draft goes when the changes were saved or discarded (a failure is logged,
    /// and the entry is left over).
    func endRecoveryData(discardingChanges: Bool) {
        let entry = lifecycle.withLock { lifecycle -> DraftEntry? in
            defer {
                lifecycle.draft = nil
                lifecycle.autosavedContentsURL = nil
                lifecycle.draftedChangeCount = nil
            }
            return lifecycle.draft
        }
        guard let entry else { return }
        if discardingChanges || !hasUnsavedChanges {
            Self.remove(entry, operation: .close)
        } else {
            entry.release()
        }
    }

    /// Reads the draft at `url` into content, as ``open()`` reads the file, without changing
    /// the document.
    func readDraft(at url: URL) async throws(DocumentKitError) -> Content {
        let format = self.format
        return try await perform { () throws(DocumentKitError) -> Content in
            let tree = try self.readTree(at: url, fileSystem: self.saveOptions.fileSystem)
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

private let recoveryLogger = Logger(label: "DocumentKit.recovery")
