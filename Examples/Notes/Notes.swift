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
            Exit status: 0 success, 64 usage (the command line is wrong), 65 bad data (a damaged note, one \
            this version can't read, one too large to save, a note edited by another program (`notes repair`), or a title that names several notes), 66 no such \
            note or library, 73 can't create (a note with that title exists, or a name too long to save), 74 \
            I/O error, 75 busy (try again; also a note a sync may still be delivering), 77 read-only (a read-only library, or a note a newer version allows \
            only newer versions to change).
            Errors: one line on stderr, `notes: …`; with --json, a JSON object on stderr instead: \
            {"error": {"status": 65, "code": "corruptData", "path": "…", "message": "…"}} (code and path when \
            known). Warnings follow the error or the output as `notes: warning: …` lines; NOTES_LOG_LEVEL=debug \
            (info, notice, warning) prints every log line at that level as it happens, with its time.
            Sync engines: a copy a sync engine made (`trip.sync-conflict-….note`, `body.json.conflict1`) is \
            adopted as a conflict version only beside its original and never when the manifest lists it; \
            --sync-engine (or $NOTES_SYNC_ENGINES) names the engines the library lives under.
            Index: commands find notes through the library's document index, kept per machine in the user's \
            cache folder ($XDG_CACHE_HOME/DocumentKit/indexes, else ~/.cache/DocumentKit/indexes; \
            $NOTES_INDEX_CACHE names another folder). It only finds: every note a command uses is opened, and a \
            stale or damaged index is read again, never trusted. A command about one note reads only that note; \
            `list` prints from the index (a note it can't read is reported; `check` says why in full); copies \
            sync engines left are adopted among what changed since the last command. NOTES_INDEX=off turns it \
            off: every command reads every note, as before (the baseline of `docbench library`).
            """,
        version: NoteFormat.appVersion,
        subcommands: [
            Init.self, New.self, List.self, Show.self, Edit.self, Attach.self, Remove.self, Move.self, Watch.self,
            Versions.self, Restore.self, Recover.self, Conflicts.self, Resolve.self, Check.self, Migrate.self, Repair.self,
            Export.self, Import.self, Serve.self, Tour.self,
        ]
    )

    /// Sets up logging (see `NotesLog`), then runs.
    static func main() async {
        NotesLog.bootstrap()
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

    @Option(
        name: .customLong("sync-engine"),
        help: ArgumentHelp(
            "A sync engine the library lives under, whose conflict copies become conflict versions (repeatable): "
                + "\(LibraryOptions.engineNames), or none (default: $NOTES_SYNC_ENGINES, comma-separated, else all).",
            valueName: "engine"))
    var syncEngineNames: [String] = []

    func validate() throws {
        guard NoteFormat.versions.contains(readerVersion) else {
            throw ValidationError("--reader-version must be from \(NoteFormat.versions.lowerBound) to \(NoteFormat.versions.upperBound).")
        }
        _ = try syncEngines
    }

    static let engineNames = ConflictCopyName.Engine.allCases.map(\.rawValue).joined(separator: ", ")

    /// The sync engines named by `--sync-engine`, else `$NOTES_SYNC_ENGINES`, else every known one.
    var syncEngines: Set<ConflictCopyName.Engine> {
        get throws {
            var names = syncEngineNames
            if names.isEmpty, let environment = ProcessInfo.processInfo.environment["NOTES_SYNC_ENGINES"] {
                names = environment.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            if names.isEmpty { return ConflictCopyName.Engine.all }
            var engines: Set<ConflictCopyName.Engine> = []
            for name in names where name != "none" {
                guard let engine = ConflictCopyName.Engine(rawValue: name) else {
                    throw ValidationError("“\(name)” is not a sync engine: name one of \(Self.engineNames), or none.")
                }
                engines.insert(engine)
            }
            return engines
        }
    }

    var libraryURL: URL {
        if let library { return URL(fileURLWithPath: library) }
        if let environment = ProcessInfo.processInfo.environment["NOTES_LIBRARY"], !environment.isEmpty {
            return URL(fileURLWithPath: environment)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Notes")
    }

    /// The library, for a command that adopts no conflict copies: its index lives in this
    /// process only (see `NotesLibrary.makeIndex`).
    var notesLibrary: NotesLibrary {
        get throws { try library(persistentIndex: false) }
    }

    /// The library, its index kept between processes or not.
    func library(persistentIndex: Bool) throws -> NotesLibrary {
        NotesLibrary(
            url: libraryURL, coordinator: try NotesLibrary.makeCoordinator(), readerVersion: readerVersion,
            syncEngines: try syncEngines, persistentIndex: persistentIndex)
    }

    /// The library, once the conflict copies sync engines left in it are adopted as conflict
    /// versions: what every command that reads notes works on (call it once per command).
    var adoptedLibrary: NotesLibrary {
        get throws {
            var library = try self.library(persistentIndex: true)
            if library.isReadOnly { library = try notesLibrary }
            // A read-only library can't take copies in: it is read as it is. With the index,
            // copies are adopted among what it finds changed (see `NotesLibrary.refreshIndex`).
            if library.index != nil {
                library.adoptsConflictCopies = !library.isReadOnly
            } else if !library.isReadOnly {
                library.adoptConflictCopies()
            }
            return library
        }
    }

    /// The adopted library, for a command that changes it: exit 77 if it is read-only.
    var writableLibrary: NotesLibrary {
        get throws {
            let library = try self.library(persistentIndex: true)
            try library.requireFolder()  // a missing library, or a file: say that first
            try library.requireWritable()
            return try adoptedLibrary
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
