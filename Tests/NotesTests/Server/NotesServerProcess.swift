#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// A `notes serve` process on loopback over a test's library, and an HTTP client for it.
final class NotesServerProcess: Sendable {
    let library: URL
    let port: Int
    let process: Process
    /// What the server wrote on stderr, as it comes.
    let stderr: ServerOutput

    /// A response, whole.
    struct Reply: Sendable {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: Data

        /// The first value of header `name` (any case).
        func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: Any? { try? JSONSerialization.jsonObject(with: body) }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
        /// The `ETag` header, quotes included.
        var etag: String? { header("ETag") }
        /// The error code of an API error body.
        var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    }

    private init(library: URL, port: Int, process: Process, stderr: ServerOutput) {
        self.library = library
        self.port = port
        self.process = process
        self.stderr = stderr
    }

    /// Starts `notes serve --port 0` over `library` and waits (at most 60 s) until it listens.
    /// With a `launcher` (a command that ends by exec'ing its arguments, such as `unshare …`),
    /// the server is started through it, keeping its process id.
    static func start(
        library: URL, arguments: [String] = [], environment: [String: String] = [:], launcher: [String] = []
    ) async throws -> NotesServerProcess {
        let process = NotesRunner.process(
            ["serve", "--port", "0", "--library", library.path] + arguments, library: library, environment: environment,
            launcher: launcher)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = ServerOutput(reading: errors.fileHandleForReading)
        let found = Mutex<Int?>(nil)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let current = text.withLock { $0 }
            if let range = current.range(of: #"http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                found.withLock { $0 = Int(current[range].split(separator: ":").last!) }
                break
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let port = found.withLock({ $0 }) else {
            if process.isRunning { process.terminate() }
            throw ServerError("notes serve did not start: \(text.withLock { $0 })")
        }
        return NotesServerProcess(library: library, port: port, process: process, stderr: text)
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends a request and reads the whole response. `json` is sent as `application/json`.
    func request(
        _ method: String, _ path: String, headers: [String: String] = [:], json: Any? = nil, body: Data? = nil, timeout: Int = 60
    ) async throws -> Reply {
        var fields = headers.map { ($0.key, $0.value) }
        var payload = body
        if let json {
            fields.append(("Content-Type", "application/json"))
            payload = try JSONSerialization.data(withJSONObject: json)
        }
        let response = try await LoopbackHTTP.request(port: port, method: method, path: path, headers: fields, body: payload, timeout: timeout)
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    /// GET of a path, decoded as JSON.
    func get(_ path: String, headers: [String: String] = [:]) async throws -> Reply { try await request("GET", path, headers: headers) }

    /// Creates a note through the API; returns its id and ETag.
    func create(_ title: String, body: String = "", tags: [String] = []) async throws -> (id: String, etag: String) {
        let reply = try await request("POST", "/api/notes", json: ["title": title, "body": body, "tags": tags])
        guard reply.status == 201, let id = reply.object["id"] as? String, let etag = reply.etag else {
            throw ServerError("POST /api/notes gave \(reply.status): \(reply.text)")
        }
        return (id, etag)
    }

    /// Sends SIGTERM and waits for the process (at most `timeout`); returns its exit status.
    @discardableResult
    func terminate(timeout: Duration = .seconds(30)) async throws -> Int32 {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        return try await waitForExit(timeout: timeout)
    }

    /// Kills the process with SIGKILL and waits for it.
    func kill() async throws {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        _ = try await waitForExit(timeout: .seconds(30))
    }

    /// Waits for the process to exit; throws if it is still running after `timeout`.
    func waitForExit(timeout: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw ServerError("notes serve still running after \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

/// What a server writes on a pipe, read on a thread of its own until the end of the pipe:
/// blocking reads, no dispatch source (a `readabilityHandler`'s source outliving its
/// descriptor crashed the test process in libdispatch with many servers at once).
final class ServerOutput: Sendable {
    private let text = Mutex("")

    init(reading handle: FileHandle) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(handle.fileDescriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                self.text.withLock { $0 += String(decoding: buffer[0..<count], as: UTF8.self) }
            }
            // The handle (and its descriptor) lives as long as this thread reads it.
            withExtendedLifetime(handle) {}
        }
        thread.start()
    }

    /// The text so far, as `body` sees it.
    func withLock<T: Sendable>(_ body: (inout String) -> T) -> T { text.withLock { body(&$0) } }
}

/// A server-sent event as the client reads it.
struct ServerSentEvent: Sendable, Equatable {
    var event = "message"
    var id: String?
    var data = ""
    var json: [String: String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return [:] }
        return object.compactMapValues { $0 as? String }
    }
    /// The event's `conflicts` (the note's unresolved conflict versions), when it is a number.
    var conflicts: Int? {
        (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])?["conflicts"] as? Int
    }
}

/// A connection to `GET /api/events`, read as it comes (on a thread of its own).
final class EventStreamReader: Sendable {
    /// What the reading thread and the test share.
    private final class Shared: Sendable {
        let events = Mutex<[ServerSentEvent]>([])
        let comments = Mutex<[String]>([])
        let socket = Mutex<Int32>(-1)
        let head = Mutex<Int?>(nil)
        let ended = Mutex(false)
    }

    private let shared = Shared()

    /// The response's status, once it came.
    var status: Int? { shared.head.withLock { $0 } }
    /// Whether the server ended the stream.
    var hasEnded: Bool { shared.ended.withLock { $0 } }

    /// Connects to `server`'s event stream, with `Last-Event-ID: lastEventID` if given.
    init(server: NotesServerProcess, lastEventID: String? = nil, query: String = "") throws {
        let fd = try LoopbackHTTP.connect(port: server.port, timeout: 3600)
        shared.socket.withLock { $0 = fd }
        var headers: [(String, String)] = [("Accept", "text/event-stream")]
        if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
        try LoopbackHTTP.sendAll(fd, LoopbackHTTP.head("GET", "/api/events" + query, headers: headers, bodyLength: nil))
        let shared = shared
        let thread = Thread {
            let reader = LoopbackHTTP.ResponseReader(fd: fd)
            defer {
                // Closed here, under the lock `close()` takes: never a number reused meanwhile.
                shared.socket.withLock { fd in
                    Glibc.close(fd)
                    fd = -1
                }
                shared.ended.withLock { $0 = true }
            }
            guard let (status, _) = try? reader.readHead() else { return }
            shared.head.withLock { $0 = status }
            var pending = ""
            var current = ServerSentEvent()
            var hasFields = false
            try? reader.readChunks { data in
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    if line.isEmpty {
                        if hasFields { shared.events.withLock { $0.append(current) } }
                        current = ServerSentEvent()
                        hasFields = false
                    } else if line.hasPrefix(":") {
                        shared.comments.withLock { $0.append(String(line.dropFirst())) }
                    } else {
                        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                        var value = parts.count > 1 ? String(parts[1]) : ""
                        if value.hasPrefix(" ") { value.removeFirst() }
                        switch parts[0] {
                        case "event": current.event = value; hasFields = true
                        case "id": current.id = value; hasFields = true
                        case "data": current.data += (current.data.isEmpty ? "" : "\n") + value; hasFields = true
                        default: break
                        }
                    }
                }
                return true
            }
        }
        thread.start()
    }

    /// Every event (with data or a kind) read so far.
    var received: [ServerSentEvent] { shared.events.withLock { $0 } }
    var receivedComments: [String] { shared.comments.withLock { $0 } }

    /// Waits (at most `timeout`) until `condition` holds for the events read so far.
    @discardableResult
    func wait(
        timeout: Duration = .seconds(20), until condition: ([ServerSentEvent]) -> Bool
    ) async throws -> [ServerSentEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = received
            if condition(now) { return now }
            try await Task.sleep(for: .milliseconds(20))
        }
        return received
    }

    /// Closes the connection (the reading thread ends).
    func close() {
        shared.socket.withLock { fd in
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    deinit { close() }
}
