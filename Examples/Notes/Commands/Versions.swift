import ArgumentParser
import DocumentKit
import Foundation

/// `notes versions --json`.
struct VersionsOfNote: Encodable {
    let title: String
    let current: VersionSummary
    /// Every version but the current one and the unresolved conflicts, newest first.
    let others: [VersionSummary]
    /// The unresolved conflict versions, newest first.
    let conflicts: [VersionSummary]
}

struct Versions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a note's versions: the current one, the older ones and the conflict versions.",
        discussion: """
            Saves keep the version they replace; sync engines' conflict copies become conflict versions. \
            `notes show TITLE --version ID` prints one, `notes restore TITLE ID` brings it back, `notes resolve` \
            settles conflicts. Problems of the version store are warnings; the listing skips what they name. \
            A note that can't be read (a damaged manifest, members that don't match it) is named by its package \
            (`Trip` or `trip.note`); if its document identifier can't be read, its versions are found by its name.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Flag(help: "Print JSON: {title, current, others, conflicts}, each version {id, date, host, user, origin, conflict, resolved, discardable}.")
    var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            let entry = try await library.findForVersions(title)
            let listing = try library.versions(of: entry.url, title: title)
            guard let current = listing.current else { throw NotesError(.noSuchNote, "“\(title)”: the note is gone") }
            let others = listing.others.filter { !$0.isUnresolvedConflict }.map(VersionSummary.init)
            let conflicts = listing.unresolvedConflicts.map(VersionSummary.init)
            if json {
                try printJSON(VersionsOfNote(title: entry.title, current: VersionSummary(current), others: others, conflicts: conflicts))
                return
            }
            print("Versions of \(entry.name), newest first:")
            print(VersionTable.text([VersionSummary(current)] + conflicts + others))
            if !conflicts.isEmpty {
                let count = conflicts.count == 1 ? "1 unresolved conflict" : "\(conflicts.count) unresolved conflicts"
                print("\(count): `notes resolve \(NotesLibrary.quoted(entry.title)) --keep current|ID` or `--merge`.")
            }
        }
    }
}

/// The versions as a text table: id, date, computer, user, origin, state.
enum VersionTable {
    static func text(_ versions: [VersionSummary]) -> String {
        let header = ["ID", "DATE", "HOST", "USER", "ORIGIN", "STATE"]
        let rows = versions.map { version in
            [
                version.origin == "current" ? "current" : version.id,
                version.date.map(VersionSummary.dateString) ?? "-", version.host ?? "-", version.user ?? "-",
                version.origin, version.state,
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { $0 == row.count - 1 ? row[$0] : row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
