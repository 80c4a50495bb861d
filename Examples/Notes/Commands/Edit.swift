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
            let library = try options.notesLibrary
            let entry = try await library.find(title)
            if let set {
                let body = text(from: set)
                _ = try await library.edit(entry.url, title: title) { $0.body = body }
            } else if let append {
                let line = text(from: append)
                _ = try await library.edit(entry.url, title: title) { $0.appendLine(line) }
            }
        }
    }
}
