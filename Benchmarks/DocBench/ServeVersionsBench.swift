#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// `docbench serve-versions`: one note PUT again and again by one `wrk` connection (durable,
/// versioned saves with `If-Match`), in steps of `seconds`: its versions grow from none to a
/// thousand or more (the standard schedule keeps all of an hour's). For each step: PUT p50 and p99,
/// and the server's CPU per PUT (`/proc/PID/stat`). What a PUT costs must not grow with the
/// note's versions: the last step's p50 against the first's is the figure.
final class ServeVersionsBench: Benchmark {
    struct Step {
        var versionsBefore = 0
        var versionsAfter = 0
        var put = ServeBench.Load()
        var serverCPUPerPUT: Double = 0  // milliseconds
    }

    let steps: Int
    let seconds: Int
    let work: WorkDirectory

    init(steps: Int, seconds: Int, work: WorkDirectory) {
        self.steps = steps
        self.seconds = seconds
        self.work = work
    }

    func run() throws -> [Step] {
        let notes = try ChildProcess.sibling(named: "notes")
        let runner = WrkRunner(wrk: try WrkRunner.locate(), seconds: seconds, work: work)
        let folder = try work.makeSubdirectory("serve-versions")
        let library = folder.path + "/library"
        let staticFolder = folder.path + "/static"
        try FileManager.default.createDirectory(atPath: staticFolder, withIntermediateDirectories: true)
        let cli = ChildProcess(executable: notes, environment: ["NOTES_INDEX_CACHE": folder.path + "/cache"], scratch: folder.path)
        let body = String(repeating: "A line of a note in the benchmark library.\n", count: 23)
        try cli.run(["init", "--library", library])
        try cli.run(["new", "Note 0", "--body", body, "--library", library])
        let server = try ServerProcess(executable: notes, library: library, staticFolder: staticFolder, scratch: folder.path)
        defer { server.stop() }
        guard let list = try JSONSerialization.jsonObject(with: server.fetch("/api/notes").body) as? [[String: Any]],
            let id = list.first?["id"] as? String
        else { throw BenchError(description: "GET /api/notes gave no note") }
        progress("docbench serve-versions: \(steps) steps of \(seconds) s")
        var result: [Step] = []
        var versions = 0
        for _ in 0..<steps {
            guard let tag = try server.fetch("/api/notes/\(id)").etag else { throw BenchError(description: "no ETag") }
            let script = try runner.writeScript(folder.path + "/put.lua", ids: [id], method: "PUT", tags: [tag], body: body)
            let before = Self.cpuTime(of: server.process.processIdentifier)
            var step = Step(versionsBefore: versions)
            step.put = try runner.runWrk(server.base, connections: 1, threads: 1, script: script)
            let after = Self.cpuTime(of: server.process.processIdentifier)
            versions += step.put.requests - step.put.failures
            step.versionsAfter = versions
            step.serverCPUPerPUT = step.put.requests > 0 ? (after - before) / Double(step.put.requests) : 0
            result.append(step)
        }
        return result
    }

    /// The process's user and system CPU time so far, in milliseconds (`/proc/PID/stat`).
    static func cpuTime(of pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func markdown(_ steps: [Step]) -> String {
        let first = steps.first?.put.p50 ?? 0
        var lines = [
            "### serve-versions: one note PUT by one connection (`notes serve --flush each`, \(seconds) s per step)",
            "",
            "| note's versions | PUT req/s | PUT p50 / p99 | server CPU per PUT | **p50 / first step's p50** | non-2xx |",
            "|---|---|---|---|---|---|",
        ]
        for step in steps {
            lines.append(
                "| \(step.versionsBefore)–\(step.versionsAfter) | \(String(format: "%.0f", step.put.requestsPerSecond)) | "
                    + String(format: "%.2f / %.2f ms", step.put.p50, step.put.p99) + " | " + String(format: "%.2f ms", step.serverCPUPerPUT)
                    + " | **" + String(format: "%.2f×", first > 0 ? step.put.p50 / first : 0) + "** | \(step.put.failures) |")
        }
        return lines.joined(separator: "\n")
    }
}
