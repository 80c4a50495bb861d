import ArgumentParser
import DocumentKit
import Foundation

/// `notes show --json`.
struct NoteDetails: Encodable {
    let title: String
    let path: String
    let modified: Date
    let created: Date
    let documentIdentifier: String
    /// The format version of the note on disk.
    let formatVersion: Int
    /// Whether this version of the app may only read the note.
    let readOnly: Bool
    let body: String
    let attachments: [String]
    /// From format 2 on; absent when the app runs as the reader of format 1.
    let tags: [String]?
    /// From format 2 on: each attachment's media type and when it was added.
    let attachmentInfo: [String: AttachmentInfo]?
    /// With `--version`: the version shown.
    let version: VersionSummary?
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a note's body.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Option(help: "Show this version of the note (an id from `notes versions`).") var version: String?
    @Flag(help: "Print JSON with the metadata.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            let entry = try await library.find(title)
            var document = entry.document
            var shown: FileVersion?
            var modified = entry.modified
            if let version {
                let found = try library.version(version, of: entry.url, title: title)
                do throws(DocumentKitError) { document = try await library.open(found) } catch {
                    throw NotesError(NotesError(error, note: title).status, "“\(title)”, version \(version): \(error)")
                }
                shown = found
                modified = found.modificationDate ?? modified
            }
            let note = document.content
            if json {
                let status = document.formatStatus
                let knowsTags = library.readerVersion >= 2
                try printJSON(
                    NoteDetails(
                        title: note.title, path: entry.url.path, modified: modified, created: note.created,
                        documentIdentifier: note.documentIdentifier.uuidString,
                        formatVersion: status?.manifestOnDisk.formatVersion ?? library.readerVersion,
                        readOnly: status?.isReadOnly ?? false, body: note.body, attachments: note.attachments.keys.sorted(),
                        tags: knowsTags ? note.tags : nil,
                        attachmentInfo: knowsTags ? note.attachmentInfo.filter { note.attachments[$0.key] != nil } : nil,
                        version: shown.map(VersionSummary.init)))
            } else {
                print(note.body, terminator: note.body.hasSuffix("\n") || note.body.isEmpty ? "" : "\n")
            }
        }
    }
}
