import ArgumentParser
import DocumentKit
import Foundation

/// One note of `notes import --json`.
struct ImportedNote: Encodable {
    /// Its title in the library (the archive's, or "TITLE (2)"…, or --as).
    let title: String
    /// Its title in the archive, when it was imported under another.
    let titleInArchive: String?
    let path: String
}

/// `notes import --json`.
struct ImportReport: Encodable {
    let archive: String
    let notes: [ImportedNote]
    /// Whether the archive's versions were imported (only into a library without versions).
    let versionsImported: Bool
    /// What the archive held that is no note and was left out.
    let skipped: [String]
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import notes from an archive: one note, or a whole library.",
        discussion: """
            The archive is extracted into a hidden folder of the library and checked before any note \
            appears: a name that leads out of the library, a link, a device, a damaged member (against its \
            note's manifest) or a decompression bomb refuses the whole import with exit status 65, naming the \
            entry, and leaves nothing behind. Each note then moves in whole. A note whose title is taken is \
            imported as “TITLE (2)” (then 3, …); --as gives the title of an archive of one note. A note \
            whose document identifier the library has already gets one of its own. An archive's versions \
            (`notes export --all --with-versions`) are imported only into a library that has none.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The archive (zip, tar.gz, tar.zst, tar.xz).") var file: String
    @Option(name: .customLong("as"), help: "The title for the archive's one note.") var newTitle: String?
    @Flag(help: "Print JSON describing what was imported.") var json = false

    func run() async throws {
        try await runReportingErrors {
            if let newTitle, newTitle.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw NotesError(.usage, "--as needs a title")
            }
            let library = try options.writableLibrary
            let archiveURL = URL(fileURLWithPath: file)
            let bar = ProgressBar("Importing", quiet: json)
            defer { bar.finish() }
            let staged: StagedArchive
            do throws(DocumentKitError) {
                staged = try await DocumentArchiver.extract(archiveAt: archiveURL, into: library.url, progress: bar.handler)
            } catch {
                throw NotesError(error, note: "")
            }
            defer { staged.discard() }
            bar.finish()
            let notes = staged.items.filter { $0.isFolder && $0.name.hasSuffix("." + NoteFormat.packageExtension) }
            let versions = staged.items.first { $0.isFolder && $0.name == VersionStore.folderName }
            let skipped = staged.items.filter { item in !notes.contains(item) && item != versions }.map(\.name)
            guard !notes.isEmpty else {
                throw NotesError(.badData, "\(archiveURL.path) holds no note (no “*.\(NoteFormat.packageExtension)” folder)", path: archiveURL.path)
            }
            if newTitle != nil, notes.count != 1 {
                throw NotesError(.usage, "--as gives the title of one note; \(archiveURL.path) holds \(notes.count)")
            }
            // Every note is checked before any moves in: one damaged note refuses the import.
            var documents: [(item: StagedItem, document: NoteDocument)] = []
            for item in notes {
                do throws(DocumentKitError) {
                    try DocumentArchiver.verifyManifest(of: item, manifestName: NoteFormat.manifestName, archiveURL: archiveURL)
                    let document = try await library.open(item.url)
                    document.versionStore = nil
                    documents.append((item, document))
                } catch {
                    var error = error
                    if error.path != archiveURL.standardizedFileURL.path {
                        error.detail = "“\(item.name)” in the archive: \(error.detail ?? "\(error)")"
                        error.path = archiveURL.standardizedFileURL.path
                    }
                    throw NotesError(error, note: "")
                }
            }
            var imported: [ImportedNote] = []
            for (item, document) in documents {
                let title = document.content.title
                let (url, finalTitle) = try await library.importNote(
                    item, document: document, from: staged, title: newTitle ?? title, exactTitle: newTitle != nil)
                imported.append(ImportedNote(title: finalTitle, titleInArchive: finalTitle == title ? nil : title, path: url.path))
            }
            var versionsImported = false
            if let versions {
                if FileManager.default.fileExists(atPath: library.store.url.path) {
                    warn("the archive's versions were not imported: the library has versions of its own")
                } else {
                    do throws(DocumentKitError) {
                        try staged.moveIn(versions, policy: .refuse, coordinator: library.coordinator)
                        versionsImported = true
                    } catch {
                        warn("the archive's versions were not imported: \(error)")
                    }
                }
            }
            for name in skipped { warn("“\(name)” in \(archiveURL.path) is no note; it was not imported") }
            if json {
                try printJSON(ImportReport(archive: archiveURL.path, notes: imported, versionsImported: versionsImported, skipped: skipped))
            } else {
                for note in imported {
                    let renamed = note.titleInArchive.map { " (titled “\($0)” in the archive)" } ?? ""
                    print("\(note.path)\t\(note.title)\(renamed)")
                }
            }
        }
    }
}
