import DocumentKitTesting
import Foundation
import Testing

/// A library of its own with a `notes serve` over it: what each API test starts from.
struct ServedLibrary {
    let directory: TemporaryDirectory
    let notes: NotesRunner
    let server: NotesServerProcess

    var library: URL { notes.library }

    /// Makes a library (`notes init`), lets `prepare` put notes in it, and starts the server.
    static func start(
        arguments: [String] = [], environment: [String: String] = [:], launcher: [String] = [],
        prepare: (NotesRunner) throws -> Void = { _ in }
    ) async throws -> ServedLibrary {
        let directory = try TemporaryDirectory(prefix: "notes-serve")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try prepare(notes)
        let server = try await NotesServerProcess.start(
            library: notes.library, arguments: arguments, environment: environment, launcher: launcher)
        return ServedLibrary(directory: directory, notes: notes, server: server)
    }

    /// The package of the note titled `title` made by `notes new` (`Trip` → `trip.note`).
    func package(_ name: String) -> URL { library.appendingPathComponent(name) }

    /// Every file under the library folder whose name starts with `prefix` (hidden ones too).
    func files(named prefix: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: library.path)
        var found: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if (path as NSString).lastPathComponent.hasPrefix(prefix) { found.append(path) }
        }
        return found
    }
}

extension NotesServerProcess {
    /// `PUT /api/notes/{id}` with `If-Match: etag` (none if nil) and the JSON `change`.
    func put(_ id: String, ifMatch etag: String?, _ change: [String: Any]) async throws -> Reply {
        try await request("PUT", "/api/notes/\(id)", headers: etag.map { ["If-Match": $0] } ?? [:], json: change)
    }

    /// The note `id` as `GET /api/notes/{id}` gives it; fails the test unless it is a 200.
    func note(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let reply = try await get("/api/notes/\(id)")
        #expect(reply.status == 200, "GET /api/notes/\(id) gave \(reply.status): \(reply.text)", sourceLocation: sourceLocation)
        return reply
    }
}

extension NotesServerProcess.Reply {
    /// The `error` object of an API error body.
    var error: [String: Any] { object["error"] as? [String: Any] ?? [:] }
    var errorMessage: String { error["message"] as? String ?? "" }
    /// The body as a JSON array of objects.
    var objects: [[String: Any]] { json as? [[String: Any]] ?? [] }
}

/// Checks that `reply` is an API error: `status`, a JSON body `{"error": {"status", "code",
/// "message"}}` whose status is the response's, and `code` if given.
func expectAPIError(
    _ reply: NotesServerProcess.Reply, _ status: Int, code: String? = nil, mentioning words: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(reply.status == status, "expected \(status), got \(reply.status): \(reply.text)", sourceLocation: sourceLocation)
    #expect(
        reply.header("Content-Type")?.hasPrefix("application/json") == true, "an error's body is JSON: \(reply.headers)",
        sourceLocation: sourceLocation)
    let error = reply.error
    #expect(error["status"] as? Int == status, "the body's status is the response's: \(reply.text)", sourceLocation: sourceLocation)
    #expect(!(error["code"] as? String ?? "").isEmpty, "the body has a code: \(reply.text)", sourceLocation: sourceLocation)
    #expect(!reply.errorMessage.isEmpty, "the body has a message: \(reply.text)", sourceLocation: sourceLocation)
    if let code { #expect(reply.errorCode == code, "code \(code) expected: \(reply.text)", sourceLocation: sourceLocation) }
    for word in words {
        #expect(reply.errorMessage.contains(word), "the message names \(word): \(reply.errorMessage)", sourceLocation: sourceLocation)
    }
}

/// The SHA-256 of `data` as the API quotes it (`"…"`, 64 hex digits).
func quotedSHA256(of data: Data) throws -> String {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("sha-\(UUID().uuidString)")
    try data.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [file.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return "\"\(text.prefix(64))\""
}

/// Runs `command` with `arguments` (a shell tool: `unzip`, `cp`, …); returns its status and stdout.
@discardableResult
func runTool(_ command: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [command] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}
