import ArgumentParser
import DocumentKit
import Foundation
import Logging

/// `notes`: a notes library on DocumentKit.
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "A notes library, each note a package saved atomically by DocumentKit.",
        discussion: """
            The library is --library DIR, else $NOTES_LIBRARY, else ~/Notes.
            Exit status: 0 success, 64 usage, 65 bad data (a damaged note, or one this version can't
            read), 66 no such note or library, 73 can't create (a note with that title exists), 74 I/O
            error, 75 busy (try again: also a note a sync may still be delivering), 77 read-only (a newer version wrote the note and allows only
            newer versions to change it).
            """,
        version: NoteFormat.appVersion,
        subcommands: [
            Init.self, New.self, List.self, Show.self, Edit.self, Attach.self, Remove.self, Move.self, Watch.self,
            Versions.self, Restore.self, Recover.self, Conflicts.self, Resolve.self, Check.self, Migrate.self, Repair.self,
            Tour.self,
        ]
    )

    /// Logs warnings and errors on stderr (set NOTES_LOG_LEVEL=debug, info or notice for more), then runs.
    static func main() async {
        let level = ProcessInfo.processInfo.environment["NOTES_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        await Self.main(nil)
    }
}

/// The `--library` option every subcommand accepts, and the hidden `--reader-version`.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: "The library folder (default: $NOTES_LIBRARY, else ~/Notes).")
    var library: String?

    /// For tests of the format matrix: behave as the reader and writer of this format version.
    @Option(
        name: .customLong("reader-version"),
        help: ArgumentHelp("Behave as the reader and writer of this notes format version (for tests).", visibility: .hidden))
    var readerVersion: Int = NoteFormat.currentVersion

    func validate() throws {
        guard NoteFormat.versions.contains(readerVersion) else {
            throw ValidationError("--reader-version must be from \(NoteFormat.versions.lowerBound) to \(NoteFormat.versions.upperBound).")
        }
    }

    var libraryURL: URL {
        if let library { return URL(fileURLWithPath: library) }
        if let environment = ProcessInfo.processInfo.environment["NOTES_LIBRARY"], !environment.isEmpty {
            return URL(fileURLWithPath: environment)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Notes")
    }

    var notesLibrary: NotesLibrary {
        get throws {
            NotesLibrary(url: libraryURL, coordinator: try NotesLibrary.makeCoordinator(), readerVersion: readerVersion)
        }
    }

    /// The library, once the conflict copies sync engines left in it are adopted as conflict
    /// versions: what every command that reads notes works on (call it once per command).
    var adoptedLibrary: NotesLibrary {
        get throws {
            let library = try notesLibrary
            library.adoptConflictCopies()
            return library
        }
    }
}

/// Text given on the command line, or `-` for standard input.
func text(from argument: String) -> String {
    guard argument == "-" else { return argument }
    let data = FileHandle.standardInput.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self)
}

/// Prints a value as JSON (sorted keys, pretty).
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
