import DocumentKit
import Foundation
import Synchronization

/// A small package document for the tests: `text.txt` plus any other members kept as they are.
struct TextContent: Sendable, Equatable {
    var text: String
}

final class TextPackageDocument: Document<TextContent>, @unchecked Sendable {
    /// Lets a test hold a save inside `fileWrapper(for:)` (to edit while it runs).
    let gate = SaveGate()

    override func read(from fileWrapper: FileWrapper) throws -> TextContent {
        guard let member = fileWrapper["text.txt"] else { throw MissingMember(name: "text.txt") }
        return TextContent(text: String(decoding: try member.regularFileContents, as: UTF8.self))
    }

    override func fileWrapper(for content: TextContent, replacing previous: FileWrapper?) throws -> FileWrapper {
        gate.pass()
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        tree["text.txt"] = FileWrapper(regularFileWithContents: Data(content.text.utf8))
        return tree
    }
}

struct MissingMember: Error, CustomStringConvertible {
    let name: String
    var description: String { "the member \(name) is missing" }
}

/// A gate a save waits at, when closed.
final class SaveGate: Sendable {
    private let state = Mutex<(closed: Bool, waiting: Bool)>((false, false))
    private let opened = DispatchSemaphore(value: 0)

    func close() { state.withLock { $0.closed = true } }

    /// Opens the gate and lets a waiting save go on.
    func open() {
        let wasClosed = state.withLock { state -> Bool in
            defer { state.closed = false }
            return state.closed
        }
        if wasClosed { opened.signal() }
    }

    /// Whether a save is waiting at the gate.
    var hasWaiter: Bool { state.withLock { $0.waiting } }

    func pass() {
        let mustWait = state.withLock { state -> Bool in
            if state.closed { state.waiting = true }
            return state.closed
        }
        if mustWait {
            opened.wait()
            state.withLock { $0.waiting = false }
        }
    }
}
