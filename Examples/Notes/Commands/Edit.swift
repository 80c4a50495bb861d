import ArgumentParser
import DocumentKit
import Foundation

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a note's body, or add a line to it.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Option(help: "The new body (`-` reads standard input).") var set: String?
    @Option(help: "A line to add at the end (`-` reads standard input).") var append: String?

    func validate() throws {
        guard (set == nil) != (append == nil) else { throw ValidationError("Give exactly one of --set and --append.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let entry = try await options.notesLibrary.find(title)
            if let set {
                let body = text(from: set)
                entry.document.update { $0.body = body }
            } else if let append {
                let line = text(from: append)
                entry.document.update { $0.appendLine(line) }
            }
            do throws(DocumentKitError) { try await entry.document.close() } catch { throw NotesError(error, note: title) }
        }
    }
}
