import DocumentKit
import Foundation

/// A note on disk, read and written as format `readerVersion` (`NoteFormat`): the document
/// applies the format's rules when it opens (migrating older notes, refusing or opening
/// read-only newer ones) and writes the manifest at every save.
final class NoteDocument: Document<Note>, @unchecked Sendable {
    /// The format version this document reads and writes.
    let readerVersion: Int

    /// A note of the current format, not read yet.
    required init(fileURL: URL, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil) {
        readerVersion = NoteFormat.currentVersion
        super.init(fileURL: fileURL, saveOptions: saveOptions, coordinator: coordinator)
    }

    /// A note not read yet, read and written as format `readerVersion`: call `open()`.
    init(fileURL: URL, readerVersion: Int, coordinator: FileCoordinator? = nil, durability: Durability = .durable) {
        self.readerVersion = readerVersion
        super.init(fileURL: fileURL, saveOptions: SaveOptions(durability: durability), coordinator: coordinator)
    }

    /// A new note, not saved yet, written as format `readerVersion`.
    init(
        fileURL: URL, content: Note, readerVersion: Int = NoteFormat.currentVersion, coordinator: FileCoordinator? = nil,
        durability: Durability = .durable
    ) {
        self.readerVersion = readerVersion
        super.init(fileURL: fileURL, content: content, saveOptions: SaveOptions(durability: durability), coordinator: coordinator)
    }

    /// Drafts (autosaves elsewhere, kept for crash recovery) go to the library's hidden
    /// `.documentkit-drafts` folder, which `notes recover` lists.
    override var autosaveDraftsFolder: URL { NotesLibrary.draftsFolder(of: fileURL.deletingLastPathComponent()) }

    override var format: FormatDescription? { NoteFormat.description(version: readerVersion) }

    override var writer: DocumentManifest.Writer {
        DocumentManifest.Writer(name: "notes", version: NoteFormat.appVersion(for: readerVersion))
    }

    override func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> Note {
        try NoteCoding(version: readerVersion).decode(fileWrapper, manifest: manifest)
    }

    override func fileWrapper(
        for note: Note, manifest: inout DocumentManifest, replacing previous: FileWrapper?
    ) throws -> FileWrapper {
        try NoteCoding(version: readerVersion).encode(note, manifest: &manifest, replacing: previous)
    }

    /// Merges a conflict version into the note: the bodies line by line from their common
    /// ancestor when known (`LineMerge`: where both changed the same lines, both sides are kept
    /// between markers); title and tags stay the current ones; attachments are the union (the
    /// current one wins on the same name).
    override func merge(_ current: Note, with other: Note, ancestor: Note?) throws -> Note {
        var note = current
        note.body = LineMerge.merge(base: ancestor?.body, ours: current.body, theirs: other.body).text
        for (name, wrapper) in other.attachments where note.attachments[name] == nil {
            note.attachments[name] = wrapper
            if let info = other.attachmentInfo[name] { note.attachmentInfo[name] = info }
        }
        return note
    }

}
