import ArgumentParser
import DocumentKit
import Foundation

struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accept a note's files as they are now, after another program edited them.",
        discussion: """
            A note whose files no longer match its manifest (an editor saved body.json, a script appended to \
            it) is refused by every command. While something in the note changed in the last 60 seconds a \
            sync may still be delivering it: repair refuses (exit 75), and the note opens by itself once the \
            sync has delivered it whole. Once nothing in it has changed for that long, the edit has settled: \
            repair writes a manifest that records the files as they are, after keeping the note exactly as \
            found as a version (`notes versions TITLE`, `notes restore TITLE ID`). Files that can't be read as \
            a note (a missing or malformed body) are not accepted: restore a version instead. \
            $NOTES_SETTLE_SECONDS sets the settle period.
            Exit status: 0 repaired (or nothing to repair), 65 the files can't be read as a note, 66 no such \
            note, 75 still changing (try again later), 77 a newer version wrote the note.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title or package name.") var title: String

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            let url = try await Self.package(named: title, in: library)
            let document = NoteDocument(fileURL: url, readerVersion: library.readerVersion, coordinator: library.coordinator)
            document.versionStore = library.store
            document.packageSettlePeriod = NotesLibrary.settlePeriod
            document.presentsFile = false
            let acceptance: MemberAcceptance
            do throws(DocumentKitError) { acceptance = try await document.acceptMembersOnDisk() } catch {
                throw NotesError(error, note: title)
            }
            print(Self.report(acceptance, title: title, package: url.lastPathComponent))
        }
    }

    /// The package `title` names: by title or package name, or, for a note that can't be read,
    /// by its package name or the title its manifest records (``NotesLibrary/lookUp(_:)``).
    static func package(named title: String, in library: NotesLibrary) async throws -> URL {
        switch try await library.lookUp(title) {
        case .note(let entry): return entry.url
        case .unreadable(let url, _): return url
        }
    }

    /// What the repair did, in words.
    static func report(_ acceptance: MemberAcceptance, title: String, package: String) -> String {
        let found = acceptance.verification
        guard !found.isComplete else { return "“\(title)” (\(package)) matches its manifest: nothing to repair." }
        var changes: [String] = []
        if !found.mismatchedMembers.isEmpty { changes.append("changed: \(found.mismatchedMembers.joined(separator: ", "))") }
        if !found.missingMembers.isEmpty { changes.append("gone: \(found.missingMembers.joined(separator: ", "))") }
        var text = "Repaired “\(title)” (\(package)): its manifest now records its files as they are (\(changes.joined(separator: "; ")))."
        if let kept = acceptance.keptVersion {
            text += " The note as found is kept as version \(kept.persistentIdentifier): `notes versions \(NotesLibrary.quoted(title))`."
        }
        return text
    }
}
