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
    var description: String { message }

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A DocumentKit error about the note `note`, with the status its code calls for.
    init(_ error: DocumentKitError, note: String) {
        let status: Status =
            switch error.code {
            case .corruptData, .unsupportedFileType, .symbolicLinkNotAllowed, .newerFormat, .unsupportedFormat,
                .modifiedPackage, .migrationFailed:
                .badData
            case .readOnlyDocument: .readOnly
            case .notFound: .noSuchNote
            // A package a sync may still be delivering: try again once it has settled.
            case .busy, .changedSinceRead, .incompletePackage: .busy
            case .alreadyExists: .cantCreate
            case .invalidArgument: .usage
            default: .ioError
            }
        var message = "“\(note)”: \(error)"
        if error.code == .modifiedPackage, !note.isEmpty {
            message += " `notes repair \(NotesLibrary.quoted(note))` accepts its members as they are now (the note as found is kept as a version)."
        }
        self.init(status, message)
    }
}

/// Runs a command body, turning errors into one line on stderr and the documented exit status.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as NotesError {
        FileHandle.standardError.write(Data("notes: \(error.message)\n".utf8))
        throw ExitCode(error.status.rawValue)
    } catch let error as DocumentKitError {
        FileHandle.standardError.write(Data("notes: \(error)\n".utf8))
        throw ExitCode(NotesError(error, note: "").status.rawValue)
    }
}
