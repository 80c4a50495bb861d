import Foundation

/// Something that happened to a document: what ``Document/events()`` delivers, in order.
public enum DocumentEvent: Sendable {
    /// The document was read from its file.
    case opened
    /// Another program changed the file and the document, which had no unsaved changes, read it again.
    case reloaded
    /// A save of the given kind finished.
    case saved(SaveOperation)
    /// A save failed; the edits are still in memory. Autosaves are retried.
    case saveFailed(SaveOperation, DocumentKitError)
    /// The document gained an unresolved conflict version (``DocumentState/inConflict``).
    case conflictGained(FileVersion)
    /// A conflict version was resolved.
    case conflictResolved(FileVersion)
    /// The file was moved or renamed; ``Document/fileURL`` is the new place.
    case moved(to: URL)
    /// The file was deleted by another program; the content stays in memory, to be saved again or discarded.
    case deleted
    /// The document's state changed.
    case stateChanged(DocumentState)
    /// The document was closed: no more events come.
    case closed
}

/// What kind of save, as `NSDocument.SaveOperationType`.
public enum SaveOperation: String, Sendable, Hashable, CaseIterable {
    /// The document's content over its file.
    case save
    /// The document's content to a new file, which becomes the document's file.
    case saveAs
    /// A copy of the content to another file; the document's file does not change.
    case saveTo
    /// An autosave over the document's file.
    case autosaveInPlace
    /// An autosave somewhere else (a drafts folder), for a document that has no file yet.
    case autosaveElsewhere
}

/// A kind of change, for ``Document/updateChangeCount(_:)``, as `NSDocument.ChangeType`.
public enum DocumentChange: Sendable, Hashable {
    /// One change made.
    case done
    /// One change undone.
    case undone
    /// One change redone.
    case redone
    /// The content is now the same as the file's.
    case cleared
}

/// The document's change count at one moment (``Document/changeCountToken()``): a save that
/// started from it marks only the changes made up to then as saved.
public struct ChangeCountToken: Sendable, Hashable {
    let count: Int
}
