import ArgumentParser
import DocumentKit
import Foundation

/// One element of `notes conflicts --json`.
struct NoteConflicts: Encodable {
    let title: String
    let package: String
    /// The unresolved conflict versions, newest first.
    let conflicts: [VersionSummary]
}

struct Conflicts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the notes with unresolved conflict versions.",
        discussion: """
            A conflict version is what another writer saved at the same time, or a conflict copy a sync engine \
            (Syncthing, Dropbox, Nextcloud…) left beside a note or inside it, adopted by any notes command. \
            Settle each with `notes resolve TITLE --keep current|ID` or `--merge`.
            """)
    @OptionGroup var options: LibraryOptions
    @Flag(help: "Print JSON: an array of {title, package, conflicts}, empty when there are none.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            var found: [NoteConflicts] = []
            for (url, known) in try await library.notesThatMayHaveConflicts() {
                // A note that can't be read may still have conflict versions: name it by its package.
                var title = url.deletingPathExtension().lastPathComponent
                if let known { title = known } else if let read = try? await library.open(url) { title = read.content.title }
                let conflicts = try library.versions(of: url, title: title).unresolvedConflicts
                if !conflicts.isEmpty {
                    found.append(NoteConflicts(title: title, package: url.lastPathComponent, conflicts: conflicts.map(VersionSummary.init)))
                }
            }
            if json {
                try printJSON(found)
            } else if found.isEmpty {
                print("No unresolved conflicts.")
            } else {
                for note in found {
                    let count = note.conflicts.count == 1 ? "1 conflict" : "\(note.conflicts.count) conflicts"
                    print("“\(note.title)” (\(note.package)): \(count)")
                    print(VersionTable.text(note.conflicts).split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
                }
            }
        }
    }
}
