import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Several `notes serve` processes and the CLI on one library, and a server killed under load:
/// checked by what was acknowledged. A write is acknowledged by a 200 with an `ETag` (or a CLI
/// edit's exit 0); every acknowledged write must survive: its line is in the note's final body
/// (every write appends a line of its own to the state it read, under If-Match), and its tag is
/// the note's current one or a version in the store.
@Suite("notes serve: several processes, and SIGKILL")
struct ServerMultiProcessTests {
    /// What the writers got acknowledged.
    final class Acknowledged: Sendable {
        let lines = Mutex<[String: [String]]>([:])
        let tags = Mutex<[String: [String]]>([:])

        func add(id: String, line: String, tag: String?) {
            lines.withLock { $0[id, default: []].append(line) }
            if let tag { tags.withLock { $0[id, default: []].append(tag) } }
        }
        var count: Int { lines.withLock { $0.values.map(\.count).reduce(0, +) } }
    }

    /// Appends `line` to note `id` through `server`: GET, then PUT with If-Match, again on 412.
    /// Returns whether it was acknowledged; throws on any status but 200 and 412.
    static func append(_ line: String, to id: String, through server: NotesServerProcess, acknowledged: Acknowledged) async throws -> Bool {
        for _ in 0..<50 {
            let note = try await server.get("/api/notes/\(id)")
            guard note.status == 200, let tag = note.etag, let body = note.object["body"] as? String else {
                throw NotesServerProcess.ServerError("GET gave \(note.status): \(note.text)")
            }
            let reply = try await server.request("PUT", "/api/notes/\(id)", headers: ["If-Match": tag], json: ["body": body + line + "\n"])
            switch reply.status {
            case 200:
                acknowledged.add(id: id, line: line, tag: reply.etag)
                return true
            case 412, 503: continue
            default: throw NotesServerProcess.ServerError("PUT gave \(reply.status): \(reply.text)")
            }
        }
        return false
    }

    /// The note files' state after the run: each acknowledged line in the body, each
    /// acknowledged tag current or in the store.
    static func checkNothingAcknowledgedWasLost(_ acknowledged: Acknowledged, notes: [String: String], runner: NotesRunner) throws {
        let titles = notes
        for (id, title) in titles {
            let body = try runner.ok(["show", title])
            for line in acknowledged.lines.withLock({ $0[id] ?? [] }) {
                #expect(body.contains(line + "\n"), "“\(title)”: the acknowledged line \(line) is lost")
            }
            let details = try runner.json(["show", title, "--json"]) as? [String: Any]
            let listing = try runner.json(["versions", title, "--json"]) as? [String: Any] ?? [:]
            let versions = ((listing["others"] as? [[String: Any]] ?? []) + (listing["conflicts"] as? [[String: Any]] ?? []))
                .compactMap { $0["id"] as? String }
            let package = URL(fileURLWithPath: details?["path"] as? String ?? "")
            let manifest = try Data(contentsOf: package.appendingPathComponent("Info.json"))
            let current = "\"" + sha256Hex(manifest) + "\""
            for tag in acknowledged.tags.withLock({ $0[id] ?? [] }) where tag != current {
                let prefix = String(tag.dropFirst().prefix(16))
                #expect(versions.contains { $0.hasSuffix("-" + prefix) }, "“\(title)”: the acknowledged state \(tag) is neither current nor a version")
            }
        }
    }

    static func sha256Hex(_ data: Data) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        input.fileHandleForWriting.write(data)
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    /// A library with `count` notes; their ids by title.
    static func makeLibrary(_ folder: TemporaryDirectory, count: Int) async throws -> (NotesRunner, [String: String]) {
        let library = folder.url.appendingPathComponent("lib")
        let runner = NotesRunner(library: library)
        try runner.ok(["init"])
        var notes: [String: String] = [:]
        for index in 0..<count {
            let title = "Note \(index)"
            try runner.ok(["new", title, "--body", "start\n"])
            let details = try runner.json(["show", title, "--json"]) as? [String: Any]
            notes[details?["documentIdentifier"] as? String ?? ""] = title
        }
        return (runner, notes)
    }

    @Test func twoServersAndTheCLIEditingTheSameNotesLoseNoAcknowledgedWrite() async throws {
        let folder = try TemporaryDirectory(prefix: "notes-serve-multi")
        let (runner, notes) = try await Self.makeLibrary(folder, count: 3)
        let first = try await NotesServerProcess.start(library: runner.library)
        let second = try await NotesServerProcess.start(library: runner.library)
        let acknowledged = Acknowledged()
        let ids = notes.keys.sorted()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (serverIndex, server) in [first, second].enumerated() {
                for writer in 0..<2 {
                    group.addTask {
                        for round in 0..<8 {
                            let id = ids[(round + writer + serverIndex) % ids.count]
                            _ = try await Self.append("s\(serverIndex)-w\(writer)-r\(round)", to: id, through: server, acknowledged: acknowledged)
                        }
                    }
                }
            }
            group.addTask {
                // The CLI beside them, on its own thread (it blocks while `notes` runs).
                try await LoopbackHTTP.offPool {
                    for round in 0..<6 {
                        let id = ids[round % ids.count]
                        let line = "cli-r\(round)"
                        let result = try runner.run(["edit", notes[id]!, "--append", line])
                        if result.status == 0 { acknowledged.add(id: id, line: line, tag: nil) }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(acknowledged.count >= 30, "most writes are acknowledged (412s are retried)")
        #expect(try await first.terminate() == 0)
        #expect(try await second.terminate() == 0)
        try Self.checkNothingAcknowledgedWasLost(acknowledged, notes: notes, runner: runner)
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test func aServerKilledUnderLoadLosesNoAcknowledgedWrite() async throws {
        let folder = try TemporaryDirectory(prefix: "notes-serve-kill")
        let (runner, notes) = try await Self.makeLibrary(folder, count: 2)
        let ids = notes.keys.sorted()
        let acknowledged = Acknowledged()
        var random = SeededRandom(seed: 16)
        for round in 0..<5 {
            let server = try await NotesServerProcess.start(library: runner.library)
            let load = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<3 {
                        group.addTask {
                            var count = 0
                            while !Task.isCancelled {
                                let id = ids[(writer + count) % ids.count]
                                do {
                                    _ = try await Self.append("k\(round)-w\(writer)-\(count)", to: id, through: server, acknowledged: acknowledged)
                                } catch {
                                    return  // the server is gone: what it acknowledged is what counts
                                }
                                count += 1
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await Task.sleep(for: .milliseconds(200 + Int(random.next() % 1300)))
            try await server.kill()
            load.cancel()
            _ = await load.result
            // After each kill: every note whole (a save is all or nothing), nothing left half-written.
            let check = try runner.run(["check"])
            #expect(check.status == 0, "notes check after SIGKILL round \(round): \(check.stdout) \(check.stderr)")

        }
        #expect(acknowledged.count > 10, "the server acknowledged writes before it was killed")
        try Self.checkNothingAcknowledgedWasLost(acknowledged, notes: notes, runner: runner)
    }
}
