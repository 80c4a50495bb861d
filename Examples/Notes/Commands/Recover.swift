import ArgumentParser
import DocumentKit
import Foundation

/// One element of `notes recover --json`.
struct DraftSummary: Encodable {
    let id: String
    let package: String
    /// The note's title now, if the note exists and reads.
    let title: String?
    let date: String
    let ownerPID: Int32
    let host: String
}

struct Recover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the drafts a crashed notes process left (unsaved edits), restore one or discard it.",
        discussion: """
            A note edited and autosaved elsewhere, not saved, leaves a draft in the library's
            .documentkit-drafts folder. While its process runs, the draft is its own; once the
            process is gone (a crash), `notes recover` lists it. `--restore` saves the draft as
            the note (the note as it was is kept as a version: `notes versions TITLE`), then
            deletes the draft; `--discard` deletes it.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title, or the draft's id (with --restore or --discard).") var note: String?
    @Flag(help: "Save the draft as the note, then delete it.") var restore = false
    @Flag(help: "Delete the draft.") var discard = false
    @Flag(help: "Print JSON: an array of {id, package, title, date, ownerPID, host}, empty when there are none.") var json = false

    func validate() throws {
        guard !(restore && discard) else { throw ValidationError("Give at most one of --restore and --discard.") }
        guard (restore || discard) == (note != nil) else {
            throw ValidationError(note == nil ? "--restore and --discard need the note's title or the draft's id." : "Give --restore or --discard with a note.")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.notesLibrary
            let scan = RecoverableDraft.scan(library.draftsFolder)
            // A drafts folder another user could have filled is refused (exit 77), not read as empty.
            if let error = scan.folderError { throw error }
            for damaged in scan.damaged {
                warn("a damaged draft in \(damaged.entryURL.path): \(damaged.problem)")
            }
            let drafts = scan.drafts.filter { $0.documentTypeName == String(describing: NoteDocument.self) }
            guard let note else {
                try await list(drafts, library: library)
                return
            }
            let draft = try await select(note, in: drafts, library: library)
            let name = draft.documentURL.lastPathComponent
            if discard {
                try draft.discard()
                print("Discarded the draft of \(name) of \(VersionSummary.dateString(draft.date)).")
                return
            }
            let document = NoteDocument(fileURL: draft.documentURL, readerVersion: library.readerVersion, coordinator: library.coordinator)
            document.versionStore = library.store
            document.autosavePolicy = nil
            do throws(DocumentKitError) {
                try await document.open(recovering: draft)
                try await document.save()
                try await document.close()
            } catch {
                throw NotesError(error, note: name)
            }
            let title = document.content.title
            print("Restored “\(title)” (\(name)) from its draft of \(VersionSummary.dateString(draft.date)).")
            print("The note as it was is kept as a version: `notes versions \(NotesLibrary.quoted(title))`.")
        }
    }

    private func list(_ drafts: [RecoverableDraft], library: NotesLibrary) async throws {
        var summaries: [DraftSummary] = []
        for draft in drafts {
            summaries.append(
                DraftSummary(
                    id: draft.id, package: draft.documentURL.lastPathComponent, title: await Self.title(of: draft.documentURL, in: library),
                    date: VersionSummary.dateString(draft.date), ownerPID: draft.ownerPID, host: draft.host))
        }
        if json {
            try printJSON(summaries)
            return
        }
        if summaries.isEmpty {
            print("No drafts to recover.")
            return
        }
        for summary in summaries {
            let title = summary.title.map { "“\($0)” " } ?? ""
            print("\(summary.id)  \(title)(\(summary.package))  \(summary.date)  process \(summary.ownerPID) on \(summary.host)")
        }
    }

    /// The draft `argument` names: its id, else the one draft of the note with that title or package name.
    private func select(_ argument: String, in drafts: [RecoverableDraft], library: NotesLibrary) async throws -> RecoverableDraft {
        if let draft = drafts.first(where: { $0.id == argument.lowercased() }) { return draft }
        var packages: Set<String> = [NotesLibrary.packageName(for: argument)]
        if let entry = try? await library.find(argument) {
            packages.insert(entry.url.lastPathComponent)
            try? await entry.document.close(discardingChanges: true)
        }
        let matches = drafts.filter { packages.contains($0.documentURL.lastPathComponent) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw NotesError(.noSuchNote, "“\(argument)”: no draft to recover (`notes recover` lists them)") }
        throw NotesError(.usage, "“\(argument)” has \(matches.count) drafts: give one's id (\(matches.map(\.id).joined(separator: ", ")))")
    }

    /// The title of the note at `url`, if it reads.
    private static func title(of url: URL, in library: NotesLibrary) async -> String? {
        guard let document = try? await library.open(url) else { return nil }
        let title = document.content.title
        try? await document.close(discardingChanges: true)
        return title
    }
}
