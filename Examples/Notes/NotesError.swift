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
                .incompletePackage, .migrationFailed:
                .badData
            case .readOnlyDocument: .readOnly
            case .untrustedFolder: .readOnly  // 77, EX_NOPERM: a folder another user could control
            case .notFound: .noSuchNote
            case .busy, .changedSinceRead: .busy
            case .alreadyExists: .cantCreate
            case .invalidArgument: .usage
            default: .ioError
            }
        self.init(status, "“\(note)”: \(error)")
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
