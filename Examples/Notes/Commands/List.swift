import ArgumentParser
import DocumentKit
import Foundation

/// One line of `notes list --json`.
struct NoteSummary: Encodable {
    let title: String
    let path: String
    let modified: Date
    let documentIdentifier: String
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the notes.")
    @OptionGroup var options: LibraryOptions
    @Flag(help: "Print JSON: an array of {title, path, modified, documentIdentifier}.") var json = false

    func run() async throws {
        try await runReportingErrors {
            var problems: [String] = []
            let entries = try await options.notesLibrary.entries(problem: { url, error in
                problems.append("notes: skipping \(url.lastPathComponent): \(error)")
            })
            .sorted { $0.note.title.localizedStandardCompare($1.note.title) == .orderedAscending }
            for problem in problems { FileHandle.standardError.write(Data((problem + "\n").utf8)) }
            if json {
                try printJSON(entries.map {
                    NoteSummary(
                        title: $0.note.title, path: $0.url.path, modified: $0.modified,
                        documentIdentifier: $0.note.documentIdentifier.uuidString)
                })
            } else {
                let formatter = ISO8601DateFormatter()
                for entry in entries { print("\(formatter.string(from: entry.modified))  \(entry.note.title)") }
            }
        }
    }
}
