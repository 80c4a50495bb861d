import ArgumentParser
import DocumentKit
import Foundation

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upgrade notes written in an older format to the current one.",
        discussion: """
            Every note (or the one named) in an older format is upgraded through the registered steps and \
            saved in the current format; notes in the current format or a newer one are left alone. Other \
            commands upgrade a note too, when they save it. The original is kept as a version of the note \
            (`notes versions TITLE` lists it, `notes restore TITLE ID` brings it back).
            Exit status: 0 if every note is in the current format or newer afterwards, 65 if one can't be \
            read or upgraded.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "Only this note (its title or package name).") var title: String?

    func run() async throws {
        try await runReportingErrors {
            let library = try options.writableLibrary
            var failed = false
            for url in try await library.select(title) {
                do { print(try await Self.migrate(url, in: library)) } catch {
                    warn("\(url.lastPathComponent): \(error)")
                    failed = true
                }
            }
            if failed { throw ExitCode(NotesError.Status.badData.rawValue) }
        }
    }

    /// Upgrades the note at `url` under one coordinated write; returns what was done.
    static func migrate(_ url: URL, in library: NotesLibrary) async throws -> String {
        try await library.coordinator.coordinate(with: [.writingIntent(with: url)]) { _ in
            let document = try await library.open(url)
            let name = "“\(document.content.title)” (\(url.lastPathComponent))"
            guard let status = document.formatStatus, let from = status.migratedFromFormatVersion else {
                let version = document.formatStatus?.manifestOnDisk.formatVersion ?? library.readerVersion
                return "\(name) is in format \(version) already."
            }
            try await document.save()
            let steps = status.migrationSteps.isEmpty ? "" : " (\(status.migrationSteps.joined(separator: ", ")))"
            return "Upgraded \(name) from format \(from) to format \(library.readerVersion)\(steps). "
                + NotesLibrary.originalKept(title: document.content.title, from: from)
        }
    }
}
