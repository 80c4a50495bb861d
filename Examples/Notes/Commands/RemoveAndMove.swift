import ArgumentParser
import DocumentKit
import Foundation

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete a note; its last state is kept as a version.",
        discussion: """
            A note that can't be read (a damaged manifest, members that don't match it) is removed too, named by \
            its package (`Trip` or `trip.note`). Its last state stays in the version store.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            let entry = try await library.findForVersions(title)
            try await entry.document?.close(discardingChanges: true)
            let mark = await library.markListing(for: [entry.url])
            let kept = try await library.coordinator.coordinate(with: [.writingIntent(with: entry.url, options: .forDeleting)]) { granted in
                do throws(DocumentKitError) {
                    // Inside this coordination: a store that doesn't coordinate again.
                    let store = VersionStore(
                        libraryURL: library.url, manifestName: NoteFormat.manifestName, durability: library.store.durability,
                        syncEngines: library.store.syncEngines)
                    let kept = try store.addVersion(ofItemAt: granted[0].url, origin: .added)
                    try FileItem.remove(at: granted[0].url)
                    return kept
                } catch {
                    throw NotesError(error, note: title)
                }
            }
            await library.noteChanges(at: [entry.url], since: mark)
            print("Removed \(entry.document == nil ? entry.name : "“\(entry.title)”"); its last state is kept as version \(kept.persistentIdentifier).")
        }
    }
}

struct Move: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mv", abstract: "Rename a note.")
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title.") var title: String
    @Argument(help: "The new title.") var newTitle: String

    func run() async throws {
        try await runReportingErrors {
            let trimmed = newTitle.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw NotesError(.usage, "a note needs a title") }
            let library = try options.writableLibrary
            let entry = try await library.find(title)
            if await library.existingNote(titled: trimmed, excluding: entry.url) != nil {
                throw NotesError(.cantCreate, "“\(trimmed)”: a note with this title exists already")
            }
            // The title lives in the manifest: save it first, then give the package its new name,
            // both under one coordination (moving the note, replacing whatever is at the new name).
            let newSlug = NotesLibrary.slug(for: trimmed)
            let destination = entry.url.deletingPathExtension().lastPathComponent == newSlug
                ? entry.url : library.newPackageURL(for: trimmed)
            let mark = await library.markListing(for: [entry.url, destination])
            try await library.coordinator.coordinate(with: [
                .writingIntent(with: entry.url, options: .forMoving), .writingIntent(with: destination, options: .forReplacing),
            ]) { _ in
                _ = try await library.edit(entry.url, title: title) { $0.title = trimmed }
                if destination != entry.url {
                    do throws(DocumentKitError) { try FileItem.move(from: entry.url, to: destination) } catch {
                        throw NotesError(error, note: title)
                    }
                }
            }
            await library.noteChanges(at: [entry.url, destination], since: mark)
            print("Renamed “\(title)” to “\(trimmed)”")
        }
    }
}
