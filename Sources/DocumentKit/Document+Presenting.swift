#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization

private let presentingLogger = Logger(label: "DocumentKit.document")

/// The presenter of a document's file: hears of changes other threads and processes make to it
/// (coordinated or not: the namespace's watcher sees editors, `mv`, `rm`, sync engines) and of
/// coordinators that want to read it, and hands them to the document. It holds the document
/// weakly: the document holds its registration, and a released document stops presenting.
final class DocumentPresenter<Content: Sendable>: FilePresenter {
    private weak let document: Document<Content>?

    init(document: Document<Content>) { self.document = document }

    var presentedItemURL: URL? { document?.fileURL }

    func presentedItemDidChange() async { document?.itemDidChangeOnDisk() }
    func presentedItemDidMove(to newURL: URL) async { document?.itemDidMove(to: newURL) }
    func accommodatePresentedItemDeletion() async { document?.itemWasDeleted() }
    func savePresentedItemChanges() async throws { try await document?.saveBeforeAnotherReads() }
}

/// A document presents its file while it is open, if it has a coordinator (without one it hears
/// of nothing: changes on disk show up only as `changedSinceRead` or conflict versions at the
/// next save).
///
/// - A change on disk that is not the document's own last state makes a clean document read the
///   file again (``DocumentEvent/reloaded``). A file that can't be read as it is now (a package a
///   sync engine has delivered only in part, `incompletePackage`; one another program edited,
///   `modifiedPackage`; corrupt contents) is left alone:
///   the document keeps what it has and its base, and looks again at the next change.
/// - A document with unsaved changes keeps them; what is on disk is kept as an unresolved
///   conflict version in its ``versionStore`` (``DocumentEvent/conflictGained(_:)``,
///   ``DocumentState/inConflict``) and becomes the document's base, so the next save writes the
///   edits over it knowingly, without keeping the same conflict twice: the conflict version
///   stays unresolved until ``resolveConflict(_:by:)``, nothing is resolved silently. Without a
///   store the document only enters `inConflict`, keeping its base, so the next save fails with
///   `changedSinceRead` as before.
/// - A move: ``fileURL`` follows (``DocumentEvent/moved(to:)``). A deletion:
///   ``DocumentEvent/deleted`` and ``DocumentState/fileDeleted``; the content stays in memory and
///   the next save writes the file again (there is no base to conflict with).
/// - Save before read: a coordinator (of another process, or of this one) that reads the file
///   asks first; a document with unsaved changes saves them then, so that the reader sees them.
///   That save writes without a coordinated write of its own: the asking coordinator already holds
///   the item (a read lock) and waits for the answer, so a coordinated write would wait for it
///   (a deadlock; FileCoordination refuses such a nested coordination with `busy`). The asker
///   holds the item on the document's behalf, as `PresentingItems.md` prescribes; the save is
///   atomic (a rename), so other readers see the old file or the new one, never a mix. If the
///   document's I/O queue is busy with a coordinated write that waits for the asker's read lock,
///   the asker times out (``/FileCoordination/FileCoordinator/presenterTimeout``) with `busy` rather than hanging.
///
/// The document's own reads and writes coordinate on behalf of its presenter (which is not asked
/// about them), and every save tells the namespace that the presenter has seen the new state.
extension Document {
    /// The coordinator of the document's own reads and writes: ``coordinator``, working for the
    /// document's presenter while it presents.
    var ownCoordinator: FileCoordinator? {
        guard let coordinator else { return nil }
        guard let registration = lifecycle.withLock({ $0.presenterRegistration }) else { return coordinator }
        return FileCoordinator(namespace: coordinator.namespace, presenter: registration, presenterTimeout: coordinator.presenterTimeout)
    }

    /// Whether the document presents its file while open (with a ``coordinator``; the default).
    /// Set it before ``open()``. Turn it off for a document read for a moment (a listing) or in a
    /// short-lived tool that exits without closing it: a reload the presenter started may still
    /// be running on the document's queue when the process exits.
    public var presentsFile: Bool {
        get { lifecycle.withLock { $0.presentsFile } }
        set {
            lifecycle.withLock { $0.presentsFile = newValue }
            if !newValue { stopPresenting() }
        }
    }

    /// Registers the document's presenter for ``fileURL`` (again, if it presents already).
    func startPresenting() {
        guard let coordinator, presentsFile else { return }
        let registration = coordinator.namespace.addPresenter(DocumentPresenter(document: self))
        let old = lifecycle.withLock { lifecycle -> PresenterRegistration? in
            defer { lifecycle.presenterRegistration = registration }
            return lifecycle.presenterRegistration
        }
        old?.remove()
    }

    /// Stops presenting the file.
    func stopPresenting() {
        lifecycle.withLock { lifecycle -> PresenterRegistration? in
            defer { lifecycle.presenterRegistration = nil }
            return lifecycle.presenterRegistration
        }?.remove()
    }

    /// After the document wrote its file (on the I/O queue): the presenter takes that state as
    /// seen. A file saved at a new place, written again after a deletion, or a new document's
    /// first save, is presented anew.
    func presenterDidSave(movedTo moved: Bool) {
        guard coordinator != nil else { return }
        let registration = lifecycle.withLock { $0.presenterRegistration }
        if let registration, !moved && !documentState.contains(.fileDeleted) {
            registration.presenterHasSeenCurrentState()
        } else {
            startPresenting()
        }
    }

    // MARK: Callbacks

    /// The item changed on disk: looked at on the I/O queue, after the reads and saves before it.
    func itemDidChangeOnDisk() {
        io.async { self.takeInChangeOnDisk() }
    }

    func itemDidMove(to url: URL) {
        location.withLock { $0 = url }
        post(.moved(to: url))
        // A rename changes the item's change time, not its contents: if it is still the same
        // file, unmodified, its state there is the base, so that the next save is no conflict.
        io.async { self.followBase(to: url) }
    }

    func itemWasDeleted() {
        io.async {
            self.state.withLock { $0.base = nil }
            self.changeState { $0.insert(.fileDeleted) }
            self.post(.deleted)
        }
    }

    /// A coordinator is about to read the file: unsaved changes are saved first, without
    /// coordinating (see above).
    func saveBeforeAnotherReads() async throws {
        let mustSave = state.withLock { state in
            state.content != nil && !state.documentState.contains(.closed) && state.readOnlyMessage == nil
                && state.changeCount != state.savedChangeCount
        }
        guard mustSave else { return }
        try await save(to: fileURL, for: .save, coordinating: false)
    }

    /// Reloads a clean document, or keeps what is on disk as a conflict version of a dirty one,
    /// unless the item on disk is the document's own last state. On the I/O queue.
    private func takeInChangeOnDisk() {
        let url = fileURL
        let (isOpen, base) = state.withLock { state in
            (state.content != nil && !state.documentState.contains(.closed), state.base)
        }
        guard isOpen, let onDisk = ItemState.ofItem(at: url, includingMembers: true) else { return }
        // The document's own last state: nothing happened to it (one stat per member, no digest).
        if let base, base.identity.isUnchanged(comparedTo: onDisk.identity), base.members == onDisk.members { return }
        let store = versionStore
        let now = onDisk.withDigest(store?.contentDigest(ofItemAt: url))
        if let base, base.isStill(now) {
            // The same contents written again, or only metadata changed (a package whose
            // manifest is not there yet): the document's own state still, its identity now the base.
            state.withLock { $0.base = now }
            return
        }
        // A state that can't be read (a package delivered in part, corrupt contents) is not taken
        // in, neither as content nor as a conflict: the next change looks again.
        guard let reading = try? readItem(at: url) else { return }
        if let (before, after) = apply(reading, keeping: [.inConflict], ifClean: true) {
            lifecycle.withLock { $0.firstUnsavedChange = nil }
            // As NSDocument's revert: an undo would now overwrite the other program's change.
            undoManager.removeAllActions()
            if before != after { post(.stateChanged(after)) }
            post(.reloaded)
            return
        }
        guard let store else {
            // No store to keep it in: the next save fails with changedSinceRead.
            changeState { $0.insert(.inConflict) }
            return
        }
        let kept: (FileVersion, ItemState?)
        do {
            kept = try coordinated(writing: false, at: url) { () throws(DocumentKitError) in
                (try store.keepConflictingVersion(ofItemAt: url, ancestorDigest: base?.digest), self.baseOfItem(at: url))
            }
        } catch {
            // The next save's conflict check keeps it then.
            presentingLogger.warning("Keeping \(url.path) as a conflict version failed: \(error); the next save keeps it")
            return
        }
        // The disk state is recorded as a conflict: the next save may write over it.
        state.withLock { $0.base = kept.1 }
        changeState {
            $0.insert(.inConflict)
            $0.remove(.fileDeleted)
        }
        post(.conflictGained(kept.0))
    }
}
