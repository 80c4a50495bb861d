import ArgumentParser
import DocumentKit
import Foundation

/// One line of `notes list --json`.
struct NoteSummary: Encodable {
    let title: String
    let path: String
    let modified: Date
    let documentIdentifier: String
    /// The note's unresolved conflict versions (`notes conflicts`); 0 when none.
    let conflicts: Int
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the notes.")
    @OptionGroup var options: LibraryOptions
    @Flag(help: "Print JSON: an array of {title, path, modified, documentIdentifier, conflicts}.") var json = false

    func run() async throws {
        try await runReportingErrors {
            var problems: [String] = []
            let library = try options.adoptedLibrary
            let entries = try await library.listedNotes(problem: { url, error in
                problems.append("notes: skipping \(url.lastPathComponent): \(error)")
            })
            .sorted { $0.title.localizedStandardCompare($1.title) == .orderedAscending }
            for problem in problems { FileHandle.standardError.write(Data((problem + "\n").utf8)) }
            // The store's problems are `notes versions`'s to report; a note it can't list shows 0.
            let conflicts = entries.map {
                $0.conflicts ?? (try? library.versions(of: $0.url, title: $0.title, reportingProblems: false))?.unresolvedConflicts.count ?? 0
            }
            if json {
                try printJSON(zip(entries, conflicts).map { entry, conflicts in
                    NoteSummary(
                        title: entry.title, path: entry.url.path, modified: entry.modified,
                        documentIdentifier: entry.documentIdentifier, conflicts: conflicts)
                })
            } else {
                let formatter = ISO8601DateFormatter()
                for (entry, conflicts) in zip(entries, conflicts) {
                    let marker = conflicts == 0 ? "" : conflicts == 1 ? "  (1 conflict)" : "  (\(conflicts) conflicts)"
                    print("\(formatter.string(from: entry.modified))  \(entry.title)\(marker)")
                }
            }
        }
    }
}
