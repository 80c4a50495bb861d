import ArgumentParser
import DocumentKit
import Foundation

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring back an older version of a note; the note as it is now is kept as a version.",
        discussion: """
            The id is one of `notes versions TITLE`. The restore is a save like any other: atomic, coordinated. \
            A note that can't be read (a damaged manifest, members that don't match it) is restored too: \
            it is kept as a version first, so nothing is lost.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Argument(help: "The version's id.") var id: String

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            let entry = try await library.findForVersions(title)
            try await entry.document?.close(discardingChanges: true)
            let version = try library.version(id, of: entry.url, title: title)
            let name = entry.name
            guard !version.isCurrent else {
                print("\(name) is at version \(id) already.")
                return
            }
            let kept = try await library.replace(entry.url, title: title, with: version)
            let date = version.modificationDate.map { " of \(VersionSummary.dateString($0))" } ?? ""
            print("Restored \(name) to version \(id)\(date).")
            if let kept {
                print("The version it replaced is kept as \(kept.persistentIdentifier) (`notes restore \(NotesLibrary.quoted(entry.title)) \(kept.persistentIdentifier)` brings it back).")
            }
        }
    }
}

extension NotesLibrary {
    /// Replaces the note at `url` with `version`'s contents under a coordinated write, keeping
    /// the note as it was as a version (origin `save`, kept before the version is read); returns
    /// that version.
    func replace(_ url: URL, title: String, with version: FileVersion) async throws -> FileVersion? {
        try await coordinator.coordinate(with: [.writingIntent(with: url)]) { _ in
            do throws(DocumentKitError) {
                // The note as it is is kept first: keeping links its files into the store, which
                // moves the change time of every file the version shares with it (a restored
                // version is often made of the note's own files). The version's tree is read after
                // that, so the save doesn't take those files for ones changed since they were read.
                let kept = try store.addVersion(ofItemAt: url, origin: .save)
                let tree = try FileWrapper(contentsOf: version.url)
                _ = try store.save(tree, to: url, options: SaveOptions(durability: store.durability), keepingReplacedAs: nil)
                return kept
            } catch {
                throw NotesError(error, note: title)
            }
        }
    }
}
