import ArgumentParser
import DocumentKit
import Foundation

/// `notes export --json`.
struct ExportReport: Encodable {
    let archive: String
    let format: String
    let notes: [String]
    let withVersions: Bool
    let entries: Int
    let memberBytes: Int64
    let archiveBytes: Int64
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a note, or the whole library, to an archive (zip, tar.gz, tar.zst, tar.xz).",
        discussion: """
            The archive holds each note's package under its name (`trip.note/Info.json`, …) and is written \
            atomically: a file at --to is replaced only by a whole archive. Each note is read under a \
            coordinated read, so a note being saved is exported before or after the save, never half-way. \
            The format is --format, else the extension of --to. --all exports every note; the versions \
            (`notes versions`) only with --with-versions. --reproducible writes the same bytes for the same notes.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "The note's title (or its package name).") var title: String?
    @Flag(help: "Export every note of the library.") var all = false
    @Option(name: .customLong("to"), help: "The archive to write.") var destination: String
    @Option(help: "zip, tar.gz, tar.zst or tar.xz (default: from the extension of --to).") var format: String?
    @Flag(help: "With --all: also export the library's versions.") var withVersions = false
    @Flag(help: "The same notes give the same bytes (fixed times, sorted entries).") var reproducible = false
    @Flag(help: "Print JSON describing what was written.") var json = false

    func validate() throws {
        guard (title == nil) != !all else { throw ValidationError("Name one note, or say --all.") }
        if withVersions && !all { throw ValidationError("--with-versions goes with --all.") }
        _ = try archiveFormat
    }

    /// The format --format names, else the one --to's extension names.
    var archiveFormat: ArchiveFormat {
        get throws {
            let available = ArchiveFormat.available.map(\.rawValue).joined(separator: ", ")
            guard let format = format.map({ ArchiveFormat(rawValue: $0.lowercased()) }) ?? ArchiveFormat(fileName: destination) else {
                if let format { throw ValidationError("“\(format)” is not an archive format; use one of: \(available).") }
                throw ValidationError("Can't tell the format from “\(destination)”: say --format (\(available)).")
            }
            guard format.isAvailable else {
                throw ValidationError("This machine's libarchive can't write \(format); use one of: \(available).")
            }
            return format
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            var items: [URL]
            if all {
                items = try library.packageURLs()
                if withVersions, FileManager.default.fileExists(atPath: library.store.url.path) { items.append(library.store.url) }
            } else {
                items = [try await library.locate(title ?? "")]
            }
            let archiveURL = URL(fileURLWithPath: destination)
            let exportOptions = ArchiveExportOptions(format: try archiveFormat, isDeterministic: reproducible)
            let bar = ProgressBar("Exporting", quiet: json)
            defer { bar.finish() }
            let summary: ArchiveExportSummary
            do throws(DocumentKitError) {
                summary = try await DocumentArchiver.export(
                    itemsAt: items, to: archiveURL, options: exportOptions,
                    coordinator: library.coordinator, progress: bar.handler)
            } catch {
                throw NotesError(error, note: title ?? "")
            }
            bar.finish()
            let notes = items.filter { $0.pathExtension == NoteFormat.packageExtension }.map(\.lastPathComponent)
            if json {
                try printJSON(
                    ExportReport(
                        archive: summary.archiveURL.path, format: summary.format.rawValue, notes: notes, withVersions: withVersions,
                        entries: summary.entryCount, memberBytes: summary.memberBytes, archiveBytes: summary.archiveBytes))
            } else {
                print(summary.archiveURL.path)
            }
        }
    }
}
