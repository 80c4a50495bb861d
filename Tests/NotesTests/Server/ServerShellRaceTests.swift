import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// `notes serve` writing notes while the shell renames them away and back (`mv`) and copies
/// them (`cp -r`, then `rm -rf` of the copy), as the soak does, but on three notes at once: the
/// server may answer 404 or 412 meanwhile, but never acknowledges a write that is then lost,
/// never writes a note again at a name it was moved from, and never gives a note's id to a copy
/// (or its own id to another note).
@Suite("notes serve: the shell's mv and cp -r beside the server's writes")
struct ServerShellRaceTests {
    /// Runs `/bin/<tool>` with `arguments`; its status.
    @discardableResult
    static func shell(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = try Process.run(URL(fileURLWithPath: "/bin/" + tool), arguments: arguments)
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func writesBesideTheShellsMovesAndCopiesAreNeverLostNorPutElsewhere() async throws {
        let folder = try TemporaryDirectory(prefix: "notes-serve-shell")
        let (runner, notes) = try await ServerMultiProcessTests.makeLibrary(folder, count: 3)
        let server = try await NotesServerProcess.start(library: runner.library)
        let ids = notes.keys.sorted()
        let library = runner.library
        let packages = try FileManager.default.contentsOfDirectory(atPath: library.path).filter { !$0.hasPrefix(".") }.sorted()
        let acknowledged = ServerMultiProcessTests.Acknowledged()
        let deadline = ContinuousClock.now + .seconds(6)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    var round = 0
                    while ContinuousClock.now < deadline {
                        round += 1
                        let id = ids[(round + writer) % ids.count]
                        let note = try await server.get("/api/notes/\(id)")
                        guard note.status == 200, let tag = note.etag, let body = note.object["body"] as? String else {
                            // Moved away for a moment: not found, as the shell left it, or busy (moved, or its
                            // copy made or removed, while it was read). Its copy holds the id while the note is
                            // away: an answer may name it. What must hold is checked at the end.
                            #expect([404, 409, 503].contains(note.status), "GET gave \(note.status): \(note.text)")
                            try await Task.sleep(for: .milliseconds(5))
                            continue
                        }
                        let line = "w\(writer)-r\(round)"
                        let reply = try await server.request("PUT", "/api/notes/\(id)", headers: ["If-Match": tag], json: ["body": body + line + "\n"])
                        #expect([200, 404, 409, 412, 503].contains(reply.status), "PUT gave \(reply.status): \(reply.text)")
                        if reply.status == 200 { acknowledged.add(id: id, line: line, tag: nil) }
                    }
                }
            }
            group.addTask {
                try await LoopbackHTTP.offPool {
                    var round = 0
                    while ContinuousClock.now < deadline {
                        let name = packages[round % packages.count]
                        round += 1
                        let source = library.appendingPathComponent(name).path
                        let moved = library.appendingPathComponent("moved-by-shell.note").path
                        let copy = library.appendingPathComponent("copy-by-shell.note").path
                        try Self.shell("mv", ["-T", source, moved])
                        Thread.sleep(forTimeInterval: Double(round % 5) * 0.005)
                        try Self.shell("mv", ["-T", moved, source])
                        try Self.shell("cp", ["-r", "-T", source, copy])
                        Thread.sleep(forTimeInterval: Double(round % 3) * 0.005)
                        try Self.shell("rm", ["-rf", copy])
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(acknowledged.count >= 20, "writes got through between the shell's moves: \(acknowledged.count)")
        // Every note is where it was, under its id, with every acknowledged line; nothing else is there.
        #expect(try FileManager.default.contentsOfDirectory(atPath: library.path).filter { !$0.hasPrefix(".") }.sorted() == packages)
        for name in packages {
            let inside = try FileManager.default.contentsOfDirectory(atPath: library.appendingPathComponent(name).path)
            #expect(!inside.contains { $0.hasSuffix(".note") }, "\(name) holds another package: \(inside)")
        }
        for id in ids {
            let note = try await server.get("/api/notes/\(id)")
            #expect(note.status == 200, "note \(id) (“\(notes[id]!)”) is found by its id: \(note.status)")
            let body = note.object["body"] as? String ?? ""
            for line in acknowledged.lines.withLock({ $0[id] ?? [] }) {
                #expect(body.contains(line + "\n"), "“\(notes[id]!)”: the acknowledged line \(line) is lost")
            }
        }
        #expect(try await server.terminate() == 0)
    }
}
