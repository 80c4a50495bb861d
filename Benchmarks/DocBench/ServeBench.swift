#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `docbench serve`: `notes serve` under `wrk` on loopback, by library size.
///
/// For each size: a library of that many notes (about 1 KB each), one `notes serve` (release,
/// beside docbench) with its hidden `--bench-static` folder; then, with `wrk`:
/// - `GET /api/notes/{id}` against the floor measured by the same server in the same run: a
///   static file of the same size (Hummingbird's `FileMiddleware`, `/bench/static.json`);
/// - `PUT /api/notes/{id}` with `If-Match` (a durable save per request; each connection writes
///   its own note and takes the new `ETag` from each response) against the floor of a durable
///   save: the raw single-file replace of `docbench file` (tmp + write + fsync + rename +
///   fsync(dir)) of the same size, measured in the same run, plus the static GET's p50 (the goal's
///   ratio); and, beside it, the same floor with as many writers at once as the PUT run has
///   connections (each replacing its own file), which tells queueing from DocumentKit's work;
///   and, where the PUT run had several connections, PUTs by one connection on another note (the
///   floor's concurrency at this library size).
final class ServeBench: Benchmark {
    struct Load {
        var requestsPerSecond: Double = 0
        var p50: Double = 0  // milliseconds
        var p99: Double = 0
        var failures = 0
        var requests = 0
    }

    struct Row {
        var notes = 0
        var get = Load()
        /// The first run after the server started: most GETs read their note (nothing cached yet).
        var coldGet = Load()
        var staticGet = Load()
        var put = Load()
        /// PUTs by one connection, after ``put`` (where that had more): the same library size at
        /// the floor's concurrency, which tells the library's size from queueing on two cores.
        var singlePut: Load?
        var durableFloor: Double = 0  // milliseconds
        /// The floor's p50 with as many writers at once as the PUT run had connections.
        var concurrentFloor: Double = 0  // milliseconds
        var writers = 1
        var bodyBytes = 0
    }

    let sizes: [Int]
    let seconds: Int
    /// The server's `--flush` mode.
    let flush: String
    let work: WorkDirectory
    /// The median raw durable save of a note-sized file, in milliseconds.
    private var durableFloor: Double?
    /// The floor's p50 by number of writers at once, in milliseconds.
    private var concurrentFloors: [Int: Double] = [:]

    init(sizes: [Int], seconds: Int, flush: String = "each", work: WorkDirectory) {
        self.sizes = sizes
        self.seconds = seconds
        self.flush = flush
        self.work = work
    }

    func run() throws -> [Row] {
        let notes = try ChildProcess.sibling(named: "notes")
        let runner = WrkRunner(wrk: try WrkRunner.locate(), seconds: seconds, work: work)
        var rows: [Row] = []
        for size in sizes {
            rows.append(try measure(size: size, notes: notes, runner: runner))
        }
        return rows
    }

    private func measure(size: Int, notes: String, runner: WrkRunner) throws -> Row {
        let folder = try work.makeSubdirectory("serve-\(size)")
        let library = folder.path + "/library"
        let staticFolder = folder.path + "/static"
        try FileManager.default.createDirectory(atPath: staticFolder, withIntermediateDirectories: true)
        let cli = ChildProcess(executable: notes, environment: ["NOTES_INDEX_CACHE": folder.path + "/cache"], scratch: folder.path)
        try cli.run(["init", "--library", library])
        progress("docbench serve: \(size) notes")
        let body = String(repeating: "A line of a note in the benchmark library.\n", count: 23)
        for index in 0..<size {
            try cli.run(["new", "Note \(index)", "--body", body, "--library", library])
        }
        let server = try ServerProcess(executable: notes, library: library, staticFolder: staticFolder, flush: flush, scratch: folder.path)
        defer { server.stop() }
        let listing = try server.fetch("/api/notes?limit=\(min(size, 1000))")
        guard let list = try JSONSerialization.jsonObject(with: listing.body) as? [[String: Any]] else {
            throw BenchError(description: "GET /api/notes gave no list")
        }
        let ids = list.compactMap { $0["id"] as? String }
        guard !ids.isEmpty else { throw BenchError(description: "the library lists no notes") }
        // The note GET, and a static file of the same size beside it.
        let probe = try server.fetch("/api/notes/\(ids[ids.count / 2])")
        try Data(repeating: UInt8(ascii: "x"), count: probe.body.count).write(to: URL(fileURLWithPath: staticFolder + "/static.json"))
        var row = Row(notes: size, bodyBytes: probe.body.count)
        // GETs spread over the notes (at most 1,000 of them): the first connection's note is not the whole story.
        let getScript = try runner.writeScript(folder.path + "/get.lua", ids: ids, method: "GET")
        row.staticGet = try runner.runWrk("\(server.base)/bench/static.json", connections: 16, script: nil)
        // Cold: the first run after the server started, most notes read for the first time; then warm.
        row.coldGet = try runner.runWrk(server.base, connections: 16, script: getScript)
        row.get = try runner.runWrk(server.base, connections: 16, script: getScript)
        // PUTs: one note per connection, its ETag followed from response to request.
        let writers = Array(ids.prefix(4))
        func putLoad(_ notes: [String], script name: String) throws -> Load {
            var tags: [String] = []
            for id in notes {
                guard let tag = try server.fetch("/api/notes/\(id)").etag else { throw BenchError(description: "no ETag") }
                tags.append(tag)
            }
            let script = try runner.writeScript(folder.path + "/" + name, ids: notes, method: "PUT", tags: tags, body: body)
            return try runner.runWrk(server.base, connections: notes.count, threads: notes.count, script: script)
        }
        row.put = try putLoad(writers, script: "put.lua")
        // Then one connection on a note of its own, as many as the floor has writers.
        if writers.count > 1, ids.count > writers.count {
            row.singlePut = try putLoad([ids[writers.count]], script: "put-one.lua")
        }
        // The durable-save floor, of the size the note's save writes (measured once per run).
        if durableFloor == nil {
            let floor = try FileBench(size: body.utf8.count, iterations: 100, work: work).run()[.floor]
            durableFloor = Double(floor?.median ?? 0) / 1e6
        }
        row.durableFloor = durableFloor ?? 0
        // The same floor with as many writers at once as the PUT run had (each its own file): what
        // concurrent durable saves cost on this disk before any of DocumentKit's work.
        row.writers = writers.count
        if writers.count == 1 {
            row.concurrentFloor = row.durableFloor
        } else {
            if concurrentFloors[writers.count] == nil {
                let samples = try FileBench(size: body.utf8.count, iterations: 100, work: work).concurrentFloor(writers: writers.count)
                concurrentFloors[writers.count] = Double(samples.median) / 1e6
            }
            row.concurrentFloor = concurrentFloors[writers.count] ?? 0
        }
        return row
    }

    func markdown(_ rows: [Row]) -> String {
        func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
        func rps(_ value: Double) -> String { String(format: "%.0f", value) }
        var lines = [
            "### serve: `notes serve --flush \(flush)` under wrk on loopback (\(seconds) s per run; GET: 2 threads, 16 connections; PUT: 4 connections, one note each)",
            "",
            "| notes | body | GET note req/s (cold) | GET note req/s | static GET req/s | **GET / static** | GET p50 / p99 (cold) | GET p50 / p99 | static p50 / p99 | PUT req/s | PUT p50 / p99 | durable-save floor p50 | **PUT p50 / (floor + static p50)** | floor p50, as many writers as PUT connections | PUT p50 / (that floor + static p50) | non-2xx |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in rows {
            let getRatio = row.staticGet.requestsPerSecond > 0 ? row.get.requestsPerSecond / row.staticGet.requestsPerSecond : 0
            let putRatio = row.put.p50 / max(row.durableFloor + row.staticGet.p50, 0.001)
            let concurrentRatio = row.put.p50 / max(row.concurrentFloor + row.staticGet.p50, 0.001)
            lines.append(
                "| \(row.notes.formatted()) | \(row.bodyBytes) B | \(rps(row.coldGet.requestsPerSecond)) | \(rps(row.get.requestsPerSecond)) | \(rps(row.staticGet.requestsPerSecond)) | **\(String(format: "%.2f×", getRatio))** | \(ms(row.coldGet.p50)) / \(ms(row.coldGet.p99)) | \(ms(row.get.p50)) / \(ms(row.get.p99)) | \(ms(row.staticGet.p50)) / \(ms(row.staticGet.p99)) | \(rps(row.put.requestsPerSecond)) | \(ms(row.put.p50)) / \(ms(row.put.p99)) | \(ms(row.durableFloor)) | **\(String(format: "%.2f×", putRatio))** | \(ms(row.concurrentFloor)) (\(row.writers)) | \(String(format: "%.2f×", concurrentRatio)) | \(row.get.failures + row.coldGet.failures + row.put.failures + (row.singlePut?.failures ?? 0)) |")
        }
        let single = rows.filter { $0.singlePut != nil || $0.writers == 1 }
        if !single.isEmpty {
            lines += [
                "",
                "PUT with one connection (the floor's concurrency), by library size:",
                "",
                "| notes | PUT req/s | PUT p50 / p99 | durable-save floor p50 | static p50 | **PUT p50 / (floor + static p50)** |",
                "|---|---|---|---|---|---|",
            ]
            for row in single {
                let put = row.singlePut ?? row.put
                let ratio = put.p50 / max(row.durableFloor + row.staticGet.p50, 0.001)
                lines.append(
                    "| \(row.notes.formatted()) | \(rps(put.requestsPerSecond)) | \(ms(put.p50)) / \(ms(put.p99)) | \(ms(row.durableFloor)) | \(ms(row.staticGet.p50)) | **\(String(format: "%.2f×", ratio))** |")
            }
        }
        lines.append("")
        lines.append("Goals (issue #16): GET ≥ 0.5× the static file's requests per second; PUT p50 ≤ 2× (durable-save floor + static GET p50).")
        return lines.joined(separator: "\n")
    }
}


/// `wrk` runs of the serve benchmarks: scripts and the figures read from its report.
struct WrkRunner {
    let wrk: String
    let seconds: Int
    let work: WorkDirectory

    /// The `wrk` of the machine, or an error saying how to install it.
    static func locate() throws -> String {
        let candidates: [String] = ["/usr/bin/wrk", "/usr/local/bin/wrk"]
        guard let wrk = candidates.first(where: { path in access(path, X_OK) == 0 }) else {
            throw BenchError(description: "wrk is missing: `Scripts/bootstrap.sh bench` installs it (apt-get install wrk)")
        }
        return wrk
    }

    /// A wrk script: GETs cycle through `ids`; PUTs write each thread's own note with its current tag.
    func writeScript(_ path: String, ids: [String], method: String, tags: [String] = [], body: String = "") throws -> String {
        let list = ids.map { "\"\($0)\"" }.joined(separator: ",")
        let script: String
        if method == "GET" {
            script = """
                local ids = {\(list)}
                local n = 0
                request = function()
                  n = n + 1
                  return wrk.format("GET", "/api/notes/" .. ids[(n % #ids) + 1])
                end
                """
        } else {
            let tagList = tags.map { "'\($0)'" }.joined(separator: ",")
            let text = body.replacingOccurrences(of: "\n", with: "\\\\n")
            script = """
                local ids = {\(list)}
                local tags = {\(tagList)}
                local counter = 0
                setup = function(thread)
                  counter = counter + 1
                  thread:set("id", ids[counter])
                  thread:set("tag", tags[counter])
                end
                local n = 0
                request = function()
                  n = n + 1
                  local body = '{"body":"' .. n .. ' \(text)"}'
                  return wrk.format("PUT", "/api/notes/" .. id, {["Content-Type"] = "application/json", ["If-Match"] = tag}, body)
                end
                response = function(status, headers, body)
                  if status == 200 then tag = headers["ETag"] or headers["etag"] end
                end
                """
        }
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs wrk for `seconds` and reads its requests per second, p50 and p99.
    func runWrk(_ url: String, connections: Int, threads: Int = 2, script: String?) throws -> ServeBench.Load {
        let scratch = try work.makeSubdirectory("wrk-\(UUID().uuidString.prefix(8))")
        var arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency"]
        if let script { arguments += ["-s", script] }
        let run = try ChildProcess(executable: wrk, scratch: scratch.path).run(arguments + [url], captureOutput: true)
        close(scratch.fd)
        var load = ServeBench.Load()
        for line in run.output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if line.hasPrefix("Requests/sec:"), parts.count == 2 { load.requestsPerSecond = Double(parts[1]) ?? 0 }
            if line.hasPrefix("50%"), parts.count == 2 { load.p50 = Self.milliseconds(String(parts[1])) }
            if line.hasPrefix("99%"), parts.count == 2 { load.p99 = Self.milliseconds(String(parts[1])) }
            if line.hasPrefix("Non-2xx or 3xx responses:"), let count = parts.last.flatMap({ Int($0) }) { load.failures = count }
            if line.contains("requests in"), let count = parts.first.flatMap({ Int($0) }) { load.requests = count }
        }
        return load
    }

    /// wrk's `1.23ms`, `850.00us`, `1.20s` in milliseconds.
    static func milliseconds(_ text: String) -> Double {
        if text.hasSuffix("us") { return (Double(text.dropLast(2)) ?? 0) / 1000 }
        if text.hasSuffix("ms") { return Double(text.dropLast(2)) ?? 0 }
        if text.hasSuffix("s") { return (Double(text.dropLast(1)) ?? 0) * 1000 }
        return Double(text) ?? 0
    }

}


/// A `notes serve --port 0` process of the benchmark, and `curl` to ask it things.
final class ServerProcess {
    let process: Process
    let base: String
    let scratch: String

    struct Fetched {
        let body: Data
        let etag: String?
    }

    init(executable: String, library: String, staticFolder: String, flush: String = "each", scratch: String) throws {
        self.scratch = scratch
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", "--port", "0", "--library", library, "--bench-static", staticFolder, "--flush", flush]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTES_INDEX_CACHE"] = scratch + "/cache"
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        var text = ""
        let deadline = now() + 60_000_000_000
        while now() < deadline {
            text += String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
            if let range = text.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) {
                base = String(text[range])
                return
            }
        }
        process.terminate()
        throw BenchError(description: "notes serve did not start: \(text)")
    }

    /// GET `path` with curl: the body and the ETag.
    func fetch(_ path: String) throws -> Fetched {
        let headers = scratch + "/curl-headers"
        let curl = ChildProcess(executable: "/usr/bin/curl", scratch: scratch)
        let run = try curl.run(["-s", "-f", "-D", headers, base + path], captureOutput: true)
        let head = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
        let etag = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
            .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) }
        return Fetched(body: Data(run.output.utf8), etag: etag)
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}
