import ArgumentParser
import DocumentKit
import Foundation

struct New: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a note.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The title.") var title: String
    @Option(help: "The body (`-` reads standard input).") var body: String?

    func run() async throws {
        try await runReportingErrors {
            let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw NotesError(.usage, "a note needs a title") }
            let library = try options.notesLibrary
            let existing = try await library.entries()
            if existing.contains(where: { $0.note.title == trimmed }) {
                throw NotesError(.cantCreate, "“\(trimmed)”: a note with this title exists already")
            }
            let url = library.newPackageURL(for: trimmed)
            let document = NoteDocument(
                fileURL: url, content: Note(title: trimmed, body: body.map(text(from:)) ?? ""), coordinator: library.coordinator)
            do throws(DocumentKitError) { try await document.save() } catch { throw NotesError(error, note: trimmed) }
            print(url.path)
        }
    }
}
