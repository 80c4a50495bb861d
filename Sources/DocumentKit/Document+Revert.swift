import Foundation
import Synchronization

/// Reverting: throwing away unsaved changes for what is on disk.
extension Document {
    /// Discards every unsaved change and the undo steps, and reads the content from `url`, as
    /// `NSDocument.revert(toContentsOf:ofType:)`. `typeName`, when given, becomes ``fileType``.
    ///
    /// - `url` is the document's file (``fileURL``): the document is then as just opened from it,
    ///   with no unsaved changes (its conflict versions stay).
    /// - `url` is another file or package, a kept version's ``/FileVersions/FileVersion/url`` say: its content
    ///   becomes the document's, which stays the document at ``fileURL`` and counts it as one
    ///   unsaved change: the next save writes it there (keeping the file's current version in the
    ///   ``versionStore``). Nothing of the other item is linked into the document: members its
    ///   content does not hold stay the document's own.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the file read (the system's error, `corruptData`…),
    ///   or `readOnlyDocument` for another item when the document may not be changed; the
    ///   document is then left as it was, unsaved changes included.
    public func revert(toContentsOf url: URL, ofType typeName: String? = nil) async throws(DocumentKitError) {
        guard !documentState.contains(.closed) else {
            throw DocumentKitError(.invalidArgument, operation: .open, path: url.path, detail: "The document is not open.")
        }
        let ownFile = url.standardizedFileURL == fileURL.standardizedFileURL
        let reading = try await perform(coordinating: .reading(url)) { () throws(DocumentKitError) in try self.readItem(at: url) }
        if ownFile {
            location.withLock { $0 = reading.url }
            apply(reading, keeping: [.inConflict])
            lifecycle.withLock { lifecycle in
                lifecycle.firstUnsavedChange = nil
                lifecycle.draftedChangeCount = nil
            }
        } else {
            try state.withLock { state throws(DocumentKitError) in
                if let message = state.readOnlyMessage {
                    throw DocumentKitError(
                        .readOnlyDocument, operation: .edit, path: fileURL.path, originalIsIntact: true, detail: message)
                }
                state.content = reading.content
                Self.count(.done, in: &state)
            }
            scheduleAutosave()
        }
        undoManager.removeAllActions()
        if let typeName { fileType = typeName }
    }
}
