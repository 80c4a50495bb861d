import DocumentKitTesting
import Foundation
import Testing

@Suite struct NotesWatchTests {
    /// A running `notes watch --json`, its output read from a file as it grows.
    final class Watcher {
        let process = Process()
        let output: URL

        init(notes: NotesRunner, directory: TemporaryDirectory, arguments: [String] = [], environment: [String: String] = [:]) throws {
            output = directory.appending("watch-output.jsonl")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.executableURL = NotesRunner.executable
            process.arguments = ["watch", "--json"] + arguments + ["--library", notes.library.path]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// The JSON lines so far.
        func lines() -> [[String: String]] {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
            }
        }

        /// Waits until at least `count` lines arrived (or 10 s passed).
        func wait(for count: Int) async -> [[String: String]] {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, lines().count < count { try? await Task.sleep(for: .milliseconds(20)) }
            try? await Task.sleep(for: .milliseconds(300))  // late duplicates would show up here
            return lines()
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @Test("notes watch prints a line per change other processes make: appeared, changed, moved, deleted")
    func watchLibrary() async throws {
        try await watchLibrary(environment: [:])
    }

    @Test("with DOCUMENTKIT_FORCE_POLLING=1 (polling, no inotify), notes watch still prints one line per change")
    func watchLibraryPolling() async throws {
        try await watchLibrary(environment: ["DOCUMENTKIT_FORCE_POLLING": "1"])
    }

    private func watchLibrary(environment: [String: String]) async throws {
        let directory = try TemporaryDirectory(prefix: "notes-watch")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Existing", "--body", "one"])
        let watcher = try Watcher(notes: notes, directory: directory, environment: environment)
        try await Task.sleep(for: .milliseconds(500))  // let it start watching

        try notes.ok(["new", "Fresh"])
        var lines = await watcher.wait(for: 1)
        #expect(lines.last?["event"] == "appeared" && lines.last?["title"] == "Fresh", "\(lines)")

        try notes.ok(["edit", "Existing", "--append", "two"])
        lines = await watcher.wait(for: 2)
        #expect(lines.last?["event"] == "changed" && lines.last?["title"] == "Existing", "\(lines)")

        // An uncoordinated writer: a shell command writing a file in the package.
        let scratch = notes.library.appendingPathComponent("existing.note/scratch.txt").path
        try shellCommand("echo three >> '\(scratch)'")
        lines = await watcher.wait(for: 3)
        #expect(lines.count == 3 && lines.last?["event"] == "changed", "\(lines)")

        try notes.ok(["rm", "Fresh"])
        lines = await watcher.wait(for: 4)
        #expect(lines.last?["event"] == "deleted" && lines.last?["title"] == "Fresh", "\(lines)")

        try shellCommand("mv '\(notes.library.appendingPathComponent("existing.note").path)' '\(notes.library.appendingPathComponent("renamed.note").path)'")
        lines = await watcher.wait(for: 5)
        #expect(lines.last?["event"] == "moved" && lines.last?["title"] == "Existing", "\(lines)")
        #expect(lines.count == 5, "one line per change: \(lines)")
    }

    @Test("notes watch TITLE keeps the note open as a presenting document: another process's edit adds a reloaded line")
    func watchNoteShowsReloads() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-watch-note")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "one"])
        let watcher = try Watcher(notes: notes, directory: directory, arguments: ["Trip"])
        try await Task.sleep(for: .milliseconds(500))  // let it start watching

        try notes.ok(["edit", "Trip", "--append", "two"])
        let deadline = ContinuousClock.now + .seconds(10)
        // The two lines come from two listeners (the document's events, the library's watcher), in either order.
        func seen(_ event: String) -> Bool { watcher.lines().contains { $0["event"] == event } }
        while ContinuousClock.now < deadline, !(seen("reloaded") && seen("changed")) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let lines = watcher.lines()
        let reloaded = lines.filter { $0["event"] == "reloaded" }
        #expect(reloaded.count == 1 && reloaded.first?["title"] == "Trip", "\(lines)")
        #expect(reloaded.first?["path"]?.hasSuffix("trip.note") == true, "\(lines)")
        #expect(lines.contains { $0["event"] == "changed" && $0["title"] == "Trip" }, "\(lines)")
    }

    private func shellCommand(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
