import ArgumentParser
import DocumentKit
import Foundation

/// A failure of a `notes` command: one line for stderr and an exit status (sysexits-style).
struct NotesError: Error, CustomStringConvertible {
    /// The documented exit statuses.
    enum Status: Int32 {
        case usage = 64, badData = 65, noSuchNote = 66, cantCreate = 73, ioError = 74, busy = 75, readOnly = 77
    }

    let status: Status
    let message: String
    /// The DocumentKit error's code and path, for `--json`.
    var code: String?
    var path: String?
    var description: String { message }

    init(_ status: Status, _ message: String, path: String? = nil) {
        self.status = status
        self.message = message
        self.path = path
    }

    /// A DocumentKit error about the note `note`, with the status its code calls for and what to do.
    init(_ error: DocumentKitError, note: String) {
        let status = Self.status(for: error)
        var message = note.isEmpty ? "\(error)" : "“\(note)”: \(error)"
        if let hint = Self.hint(for: error, note: note) { message += " " + hint }
        self.init(status, message, path: error.path)
        code = error.code.name
    }

    /// The exit status for `error`: never `usage`, which is for command lines only.
    static func status(for error: DocumentKitError) -> Status {
        if error.errno == .fileNameTooLong { return .cantCreate }
        switch error.code {
        case .corruptData, .unsupportedFileType, .symbolicLinkNotAllowed, .newerFormat, .unsupportedFormat,
            .modifiedPackage, .migrationFailed, .invalidArgument, .unsafeArchiveEntry, .archiveLimitExceeded:
            return .badData
        case .readOnlyDocument, .readOnlyFileSystem, .permissionDenied: return .readOnly
        case .untrustedFolder: return .readOnly  // 77, EX_NOPERM: a folder another user could control
        case .notFound: return .noSuchNote
        // A package a sync may still be delivering: try again once it has settled.
        case .busy, .changedSinceRead, .incompletePackage: return .busy
        case .alreadyExists: return .cantCreate
        default: return .ioError
        }
    }

    /// What a person can do about `error`, when the error itself doesn't say.
    static func hint(for error: DocumentKitError, note: String = "") -> String? {
        if error.code == .modifiedPackage, !note.isEmpty {
            return "`notes repair \(NotesLibrary.quoted(note))` accepts its members as they are now (the note as found is kept as a version)."
        }
        if error.errno == .fileNameTooLong {
            return "The name is too long to save (a save writes a temporary item with a longer name beside it): "
                + "rename the package to a shorter name (`mv` in a shell; its title stays)."
        }
        if error.code == .invalidArgument, error.detail?.contains("manifest would be") == true {
            return "The note can be read but not saved: it has more members than a manifest may list. "
                + "Copy what you need into new notes."
        }
        if error.code == .readOnlyFileSystem || error.code == .permissionDenied {
            return "The library can be read but not changed by you: remount it read-write or ask its owner."
        }
        return nil
    }

    /// The error as `notes --json` prints it on stderr.
    var json: String {
        var fields: [String: any Encodable] = ["status": Int(status.rawValue), "message": message]
        if let code { fields["code"] = code }
        if let path, !path.isEmpty { fields["path"] = path }
        let object = ["error": fields.mapValues { AnyEncodable($0) }]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(object), as: UTF8.self)) ?? #"{"error": {"status": \#(status.rawValue)}}"#
    }
}

/// Any encodable value, for a JSON object of mixed values.
private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

/// Whether the command line asks for JSON (`--json`): errors are then JSON objects too.
let wantsJSON = CommandLine.arguments.dropFirst().contains("--json")

/// Runs a command body, turning errors into one line on stderr (a JSON object with `--json`) and
/// the documented exit status. The library's warnings follow, on lines of their own.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    defer { NotesLog.flush() }
    do {
        try await body()
    } catch let error as NotesError {
        report(error)
        throw ExitCode(error.status.rawValue)
    } catch let error as DocumentKitError {
        let error = NotesError(error, note: "")
        report(error)
        throw ExitCode(error.status.rawValue)
    }
}

/// Writes `error` on stderr: `notes: MESSAGE`, or its JSON object with `--json`.
func report(_ error: NotesError) {
    let line = wantsJSON ? error.json : "notes: \(error.message)"
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
