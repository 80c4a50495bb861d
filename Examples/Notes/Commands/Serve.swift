import ArgumentParser
import DocumentKit
import Foundation

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the library over HTTP: a JSON API under /api, live events, and a web page at /.",
        discussion: """
            Listens on 127.0.0.1 (--host) port 8080 (--port; 0 picks a free one). Prints `notes: serving LIBRARY at \
            http://HOST:PORT` on stderr once it listens. The API is described at /api/openapi.json. Every write needs \
            If-Match with the note's ETag (428 without, 412 when the note changed meanwhile). SIGTERM or SIGINT: stop \
            accepting, finish the requests in flight, exit 0. The CLI, editors and sync engines may change the library \
            meanwhile: their changes show up in /api/events.
            """)
    @OptionGroup var options: LibraryOptions
    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on (0: any free port).") var port = 8080
    @Option(help: "The largest JSON body accepted, in bytes.") var maxBodyBytes = 1 << 20
    @Option(help: "The largest attachment upload accepted, in bytes.") var maxAttachmentBytes = 256 << 20
    @Option(help: "The most connections open at once (more wait to be accepted).") var maxConnections = 512
    @Option(help: ArgumentHelp(
        "How saves reach the disk: each (an fsync of every file and folder written) or file-system (one syncfs "
            + "where order matters: fewer flushes, but a save also waits for whatever else is written to that file "
            + "system; for a library on a volume of its own).", valueName: "each|file-system"))
    var flush: FlushMode = .each

    /// The values of `--flush`.
    enum FlushMode: String, ExpressibleByArgument {
        case each
        case fileSystem = "file-system"

        var durability: Durability { self == .each ? .durable : .durableBatched }
    }
    /// For `docbench serve`: the floor of a GET, static files of FOLDER served at /bench/NAME by
    /// Hummingbird's FileMiddleware in the same server.
    @Option(name: .customLong("bench-static"), help: ArgumentHelp("Serve FOLDER's files at /bench/ (for docbench serve).", visibility: .hidden))
    var benchStatic: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
        guard maxBodyBytes > 0, maxAttachmentBytes >= 0, maxConnections > 0 else { throw ValidationError("The limits must be positive.") }
    }

    func run() async throws {
        MemoryTrimmer.limitArenas()
        try await runReportingErrors {
            // A write is answered once the note is saved and durable; the version it replaced is named after.
            let library = try options.writableLibrary.flushing(flush.durability, versionCompletion: .afterSaveReturns)
            var limits = ServerLimits()
            limits.maxBodyBytes = maxBodyBytes
            limits.maxAttachmentBytes = maxAttachmentBytes
            var server = NotesServer(api: NotesAPI(library: library, events: EventHub(), limits: limits), host: host, port: port)
            server.staticFolder = benchStatic
            server.maximumConnections = maxConnections
            if let text = ProcessInfo.processInfo.environment["NOTES_SSE_HEARTBEAT_MS"], let milliseconds = Int(text), milliseconds > 0 {
                server.heartbeat = .milliseconds(milliseconds)
            }
            let (host, path) = (host, library.url.path)
            try await server.run { port in
                FileHandle.standardError.write(Data("notes: serving \(path) at http://\(host):\(port)\n".utf8))
            }
        }
    }
}
