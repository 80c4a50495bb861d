import ArgumentParser
import DocumentKit
import Foundation

struct New: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a note.",
        discussion: """
            Prints the new package's path. Titles are unique: if a note with this title exists, nothing is \
            created or replaced and the exit status is 73. Of several `notes new` of one title at once, \
            one creates the note and the others exit 73.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The title.") var title: String
    @Option(help: "The body (`-` reads standard input).") var body: String?
    @Option(name: .customLong("tag"), help: "A tag (repeat for more; format 2 and later).") var tags: [String] = []

    func run() async throws {
        try await runReportingErrors {
            let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw NotesError(.usage, "a note needs a title") }
            let library = try options.writableLibrary
            try checkTagsAreSupported(tags, by: library)
            var note = Note(title: trimmed, body: body.map(text(from:)) ?? "")
            for tag in tags { note.addTag(tag) }
            let url = try await library.create(note)
            print(url.path)
        }
    }
}

/// Tags arrived with format 2: a usage error for the reader of format 1.
func checkTagsAreSupported(_ tags: [String], by library: NotesLibrary) throws {
    guard !tags.isEmpty else { return }
    guard library.readerVersion >= 2 else {
        throw NotesError(.usage, "tags need format 2 or later; this app runs as the reader of format \(library.readerVersion)")
    }
    if let bad = tags.first(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
        throw NotesError(.usage, "“\(bad)” is not a tag: a tag needs a letter or a digit")
    }
}
