import FilePackages
import FileVersions
import FormatVersioning
import Synchronization

/// What a document knows of its state: unsaved changes, the last save's outcome, and what it
/// read of its file and format.
extension Document {
    /// The unresolved conflict version the last save made, if the item on disk was no longer
    /// the version the document was based on (another process saved in between).
    public var lastConflictVersion: FileVersion? { state.withLock { $0.lastConflictVersion } }

    /// Whether there are changes that no save has written yet.
    public var hasUnsavedChanges: Bool { state.withLock { $0.changeCount != $0.savedChangeCount } }

    /// The document's state: closed, in error after a failed save, ...
    public var documentState: DocumentState { state.withLock { $0.documentState } }

    /// The error of the last save, if it failed; nil after a successful one.
    public var lastSaveError: DocumentKitError? { state.withLock { $0.lastSaveError } }

    /// The tree as last read (and migrated) or saved.
    public var fileWrapper: FileWrapper? { state.withLock { $0.tree } }

    /// The manifest as read (and migrated, for an older document) or last saved; nil for a
    /// document without a ``format``, or a new one not saved yet.
    public var manifest: DocumentManifest? { state.withLock { $0.manifest } }

    /// What opening the document found out about its format: read-write, read-only (with the
    /// message to show), migrated from an older version... Nil for a document without a
    /// ``format`` and for a new document.
    public var formatStatus: FormatStatus? { state.withLock { $0.formatStatus } }

    /// How many member files the document has read and hashed, to check or record their
    /// digests, since it was opened or created. Members unchanged since they were checked or
    /// saved are recognised by their file's identity instead: a diagnostic of how much a save
    /// costs.
    public var hashedMemberCount: Int { state.withLock { $0.hasher.hashedFileCount } }
}
