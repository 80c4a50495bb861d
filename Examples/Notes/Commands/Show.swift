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
    let formatVersion: Int
    let body: String
    let attachments: [String]
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a note's body.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Flag(help: "Print JSON with the metadata.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let entry = try await options.notesLibrary.find(title)
            let note = entry.note
            if json {
                try printJSON(
                    NoteDetails(
                        title: note.title, path: entry.url.path, modified: entry.modified, created: note.created,
                        documentIdentifier: note.documentIdentifier.uuidString, formatVersion: NoteFormat.version,
                        body: note.body, attachments: note.attachments.keys.sorted()))
            } else {
                print(note.body, terminator: note.body.hasSuffix("\n") || note.body.isEmpty ? "" : "\n")
            }
        }
    }
}
