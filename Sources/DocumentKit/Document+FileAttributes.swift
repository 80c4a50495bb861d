import Foundation
import Synchronization

/// What `NSDocument` tells about a document's file and its edits, under Apple's names.
extension Document {
    /// The name of the document's type, as `NSDocument.fileType`. Linux has no type registry:
    /// unless set (or given to ``revert(toContentsOf:ofType:)``), it is the file name's
    /// extension (`note` for `Shopping.note`), nil for a name without one. DocumentKit reads and
    /// saves the same way whatever it says; it is for the app.
    public var fileType: String? {
        get {
            if let type = lifecycle.withLock({ $0.fileType }) { return type }
            let pathExtension = fileURL.pathExtension
            return pathExtension.isEmpty ? nil : pathExtension
        }
        set { lifecycle.withLock { $0.fileType = newValue } }
    }

    /// When the file was last modified, as this document last read or saved it, as
    /// `NSDocument.fileModificationDate`; nil before the document has a file. A change by
    /// another program shows here only once the document reads the file again.
    public var fileModificationDate: Date? {
        state.withLock { $0.base }.map { Date(timeIntervalSince1970: Double($0.identity.modificationTime) / 1e9) }
    }

    /// Whether the document has changes no save has written yet, as `NSDocument.isDocumentEdited`
    /// (the same as ``hasUnsavedChanges``).
    public var isDocumentEdited: Bool { hasUnsavedChanges }

    /// Whether the document has changes that neither a save nor an autosave (in place, or to its
    /// draft) has written yet, as `NSDocument.hasUnautosavedChanges`. After an autosave to the
    /// draft it is false while ``isDocumentEdited`` stays true.
    public var hasUnautosavedChanges: Bool {
        let (changeCount, savedChangeCount) = state.withLock { ($0.changeCount, $0.savedChangeCount) }
        guard changeCount != savedChangeCount else { return false }
        return lifecycle.withLock { $0.draftedChangeCount } != changeCount
    }
}
