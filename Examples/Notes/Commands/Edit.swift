import ArgumentParser
import DocumentKit
import Foundation

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Replace a note's body, add a line to it, or change its tags.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Option(help: "The new body (`-` reads standard input).") var set: String?
    @Option(help: "A line to add at the end (`-` reads standard input).") var append: String?
    @Option(name: .customLong("tag"), help: "Add a tag (repeat for more; format 2 and later).") var addedTags: [String] = []
    @Option(name: .customLong("untag"), help: "Remove a tag (repeat for more; format 2 and later).") var removedTags: [String] = []

    func validate() throws {
        guard set == nil || append == nil else { throw ValidationError("Give at most one of --set and --append.") }
        guard set != nil || append != nil || !addedTags.isEmpty || !removedTags.isEmpty else {
            throw ValidationError("Give --set, --append, --tag or --untag.")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            try checkTagsAreSupported(addedTags + removedTags, by: library)
            let entry = try await library.find(title)
            let body = set.map(text(from:))
            let line = append.map(text(from:))
            let (added, removed) = (addedTags, removedTags)
            _ = try await library.edit(entry.url, title: title) { note in
                if let body { note.body = body }
                if let line { note.appendLine(line) }
                for tag in added { note.addTag(tag) }
                note.tags.removeAll(where: removed.contains)
            }
        }
    }
}
