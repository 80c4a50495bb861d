import ArgumentParser
import DocumentKit
import Foundation

struct Resolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Settle a note's conflict versions: keep the current note, keep a conflict version, or merge them.",
        discussion: """
            --keep current: the note stays as it is; every unresolved conflict version is marked resolved.
            --keep ID: the note becomes conflict version ID (the current note is kept as a version); since that \
            is the final content, every other unresolved conflict of the note is marked resolved too.
            --merge: the bodies are merged line by line, the current one with each conflict version in turn \
            (oldest first, from their common ancestor when the store knows it); where both changed the same \
            lines, both sides are kept between <<<<<<< and >>>>>>> markers. Title and tags are the current \
            ones; attachments are the union (the current one wins on the same name). The note as it was is \
            kept as a version.
            Resolved conflict versions stay as older versions (`notes versions TITLE`).
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Option(help: "`current`, or the id of the conflict version to keep.") var keep: String?
    @Flag(help: "Merge the conflict versions into the note.") var merge = false

    func validate() throws {
        guard (keep == nil) != !merge else { throw ValidationError("Give either --keep current|ID or --merge.") }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            let entry = try await library.find(title)
            try await entry.document.close(discardingChanges: true)
            let name = "“\(entry.note.title)” (\(entry.url.lastPathComponent))"
            let conflicts = try library.versions(of: entry.url, title: title).unresolvedConflicts
            if let keep, keep != "current" {
                let chosen = try library.version(keep, of: entry.url, title: title)
                guard chosen.isUnresolvedConflict else {
                    throw NotesError(.usage, "“\(title)”: version \(keep) is not an unresolved conflict (`notes restore` brings back any version)")
                }
                let kept = try await library.resolve(entry.url, title: title, keeping: chosen, among: conflicts)
                print("\(name) is now conflict version \(keep); \(Self.count(conflicts.count)) resolved.")
                if let kept { print("The note as it was is kept as version \(kept.persistentIdentifier).") }
                return
            }
            guard !conflicts.isEmpty else {
                print("\(name) has no unresolved conflicts.")
                return
            }
            if merge {
                let (clashes, kept) = try await library.merge(entry.url, title: title, conflicts: conflicts)
                let marked = clashes == 0 ? "no clashes" : clashes == 1 ? "1 clash marked (<<<<<<< … >>>>>>>)" : "\(clashes) clashes marked (<<<<<<< … >>>>>>>)"
                print("Merged \(Self.count(conflicts.count)) into \(name): \(marked).")
                if let kept { print("The note as it was is kept as version \(kept.persistentIdentifier).") }
            } else {
                for conflict in conflicts {
                    do throws(DocumentKitError) { try library.store.markResolved(conflict, as: .keptCurrent) } catch {
                        throw NotesError(error, note: title)
                    }
                }
                print("Kept the current \(name); \(Self.count(conflicts.count)) resolved (kept as older versions).")
            }
        }
    }

    static func count(_ conflicts: Int) -> String { conflicts == 1 ? "1 conflict version" : "\(conflicts) conflict versions" }
}

extension NotesLibrary {
    /// Replaces the note at `url` with the conflict version `chosen` (keeping the note as it was
    /// as a version) and marks `chosen` kept and the other `conflicts` resolved, under one
    /// coordinated write. Returns the version kept of the note as it was.
    func resolve(_ url: URL, title: String, keeping chosen: FileVersion, among conflicts: [FileVersion]) async throws -> FileVersion? {
        try await coordinator.coordinate(with: [.writingIntent(with: url)]) { _ in
            let kept = try await replace(url, title: title, with: chosen)
            do throws(DocumentKitError) {
                try store.markResolved(chosen, as: .keptThis)
                for other in conflicts where other.persistentIdentifier != chosen.persistentIdentifier {
                    try store.markResolved(other, as: .keptCurrent)
                }
            } catch {
                throw NotesError(error, note: title)
            }
            return kept
        }
    }

    /// Merges the conflict versions into the note at `url`, oldest first, under one coordinated
    /// write, through `Document.resolveConflict(_:by: .merge)` (which calls `NoteDocument.merge`
    /// with the common ancestor when the store knows it, saves, keeping the note as it was as a
    /// version, and marks the version merged). Returns the number of clashes marked and the
    /// version kept of the note as it was.
    func merge(_ url: URL, title: String, conflicts: [FileVersion]) async throws -> (clashes: Int, kept: FileVersion?) {
        try await coordinator.coordinate(with: [.writingIntent(with: url)]) { _ in
            do throws(DocumentKitError) {
                let document = try await open(url)
                let before = Set(try store.versions(ofItemAt: url).others.map(\.persistentIdentifier))
                var clashes = 0
                let oldestFirst = conflicts.sorted {
                    ($0.modificationDate ?? .distantPast, $0.persistentIdentifier) < ($1.modificationDate ?? .distantPast, $1.persistentIdentifier)
                }
                for conflict in oldestFirst {
                    let markers = LineMerge.clashCount(in: document.content.body)
                    try await document.resolveConflict(conflict, by: .merge)
                    clashes += LineMerge.clashCount(in: document.content.body) - markers
                }
                try await document.close()
                let kept = try store.versions(ofItemAt: url).others
                    .filter { !before.contains($0.persistentIdentifier) && $0.origin == .save && !$0.isConflict }
                    .min { ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast) }
                return (clashes, kept)
            } catch {
                throw NotesError(error, note: title)
            }
        }
    }

}
