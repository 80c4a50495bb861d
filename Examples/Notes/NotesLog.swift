import Foundation
import Logging
import Synchronization

/// Where `notes` logs go. A person running a command sees its error first, on a line of its own:
/// the library's warnings are held back and printed after the command's own output or error, as
/// `notes: warning: …` lines without timestamps. With `NOTES_LOG_LEVEL` set (debug, info, notice,
/// warning …) every log line at that level and above is printed as it happens, with its time.
enum NotesLog {
    /// The lines held back, printed by ``flush()``.
    static let held = Mutex<[String]>([])

    /// Sets up logging for this process.
    static func bootstrap() {
        if let level = ProcessInfo.processInfo.environment["NOTES_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        } else {
            LoggingSystem.bootstrap { _ in HeldLogHandler() }
        }
    }

    /// Prints the lines held back, on stderr.
    static func flush() {
        let lines = held.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
        for line in lines { FileHandle.standardError.write(Data("notes: \(line)\n".utf8)) }
    }
}

/// Holds warnings and errors for ``NotesLog/flush()``.
struct HeldLogHandler: LogHandler {
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "\(event.level >= .error ? "error" : "warning"): \(event.message)"
        NotesLog.held.withLock { $0.append(line) }
    }
}
