import DocumentKitTesting
import Foundation
import Testing

/// Races of `notes` with itself and with the shell (issue 12, section 2), with real processes.
@Suite struct NotesShellRaceTests {
    @Test(
        "notes new of one title from several processes at once: one creates the note, the others exit 73, nothing is replaced",
        .timeLimit(.minutes(2)))
    func concurrentNewOfOneTitleCreatesOneNoteAndRefusesTheOthers() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-new-race")
        let rounds = 10
        let processes = 4
        for round in 0..<rounds {
            let notes = NotesRunner(library: directory.appending("Library-\(round)"))
            try notes.ok(["init"])
            let results = try await withThrowingTaskGroup(of: (String, NotesRunner.Result).self) { group in
                for process in 0..<processes {
                    let body = "round \(round) process \(process)"
                    group.addTask { (body, try notes.run(["new", "Same", "--body", body])) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = results.filter { $0.1.status == 0 }
            #expect(created.count == 1, "round \(round): \(created.count) processes said they created “Same”")
            for (body, result) in results where result.status != 0 {
                #expect(result.status == 73, "round \(round), \(body): \(result.stderr)")
                #expect(result.stderr.contains("a note titled “Same” exists already"), "round \(round): \(result.stderr)")
            }
            // Every acknowledged creation is a note of its own, with its body.
            let paths = created.map { $0.1.stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(Set(paths).count == paths.count, "round \(round): two creations named one package: \(paths)")
            for ((body, _), path) in zip(created, paths) {
                let shown = try notes.json(["show", URL(fileURLWithPath: path).lastPathComponent, "--json"]) as? [String: Any]
                #expect(shown?["body"] as? String == body, "round \(round): \(path) holds \(shown?["body"] ?? "nothing"), not “\(body)”")
            }
            let listed = try notes.json(["list", "--json"]) as? [[String: Any]] ?? []
            #expect(listed.count == created.count, "round \(round): \(listed.count) notes for \(created.count) creations")
            let left = try FileManager.default.contentsOfDirectory(atPath: notes.library.path).filter { $0.hasPrefix(".creating-") }
            #expect(left.isEmpty, "round \(round): left behind: \(left)")
        }
    }

    @Test(
        "a package moved with mv while notes edit waits for it: the edit lands at the new name, nothing is re-created",
        .timeLimit(.minutes(2)), arguments: ["read", "write"])
    func editWaitingForAMovedNoteFollowsIt(heldAccess: String) async throws {
        let directory = try TemporaryDirectory(prefix: "notes-mv-race")
        let namespace = directory.appending("coordination")
        try FileManager.default.createDirectory(at: namespace, withIntermediateDirectories: true)
        let environment = ["DOCUMENTKIT_COORDINATION_DIR": namespace.path]
        let library = directory.appending("Library")
        let notes = NotesRunner(library: library)
        #expect(try notes.run(["init"], environment: environment).status == 0)
        #expect(try notes.run(["new", "Trip", "--body", "first"], environment: environment).status == 0)
        let identifier = try #require((try notes.json(["show", "Trip", "--json"]) as? [String: Any])?["documentIdentifier"] as? String)
        let original = library.appendingPathComponent("trip.note")
        let moved = library.appendingPathComponent("journey.note")

        // Another process holds the note (a read: the edit finds it, then waits to write it; a
        // write: the edit waits to read it) while the shell renames it.
        let holder = try HoldingChild(namespace: namespace, access: heldAccess, path: original)
        let edit = Task.detached { try notes.run(["edit", "Trip", "--append", "second"], environment: environment) }
        try await Task.sleep(for: .seconds(2))  // the edit reaches its wait
        let mv = try Process.run(URL(fileURLWithPath: "/bin/mv"), arguments: [original.path, moved.path])
        mv.waitUntilExit()
        #expect(mv.terminationStatus == 0)
        holder.release()
        let result = try await edit.value
        try holder.waitForExit()

        #expect(result.status == 0, "\(result.stderr)")
        let packages = try FileManager.default.contentsOfDirectory(atPath: library.path).filter { $0.hasSuffix(".note") }
        #expect(packages == ["journey.note"], "packages after the edit: \(packages)")
        let shown = try notes.json(["show", "journey.note", "--json"]) as? [String: Any]
        #expect(shown?["documentIdentifier"] as? String == identifier)
        #expect(shown?["body"] as? String == "first\nsecond\n")
    }
}

/// Two packages with one document identifier (`cp -r`, a sync engine, the old re-creating save).
@Suite struct NotesSharedIdentifierTests {
    @Test("a copy made with cp -r is reported by check, named by an ambiguous lookup, and given an identifier of its own by check --fix")
    func aCopySharingTheIdentifierIsReportedAndFixed() throws {
        let directory = try TemporaryDirectory(prefix: "notes-copies")
        let library = directory.appending("Library")
        let notes = NotesRunner(library: library)
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "original"])
        let original = library.appendingPathComponent("trip.note")
        let copy = library.appendingPathComponent("trip-copy.note")
        let cp = try Process.run(URL(fileURLWithPath: "/bin/cp"), arguments: ["-r", original.path, copy.path])
        cp.waitUntilExit()
        let identifier = try #require((try notes.json(["show", "trip.note", "--json"]) as? [String: Any])?["documentIdentifier"] as? String)

        let check = try notes.run(["check"])
        #expect(check.status == 65)
        #expect(check.stdout.contains("has the document identifier of \(copy.path)"), "\(check.stdout)")
        #expect(check.stdout.contains("has the document identifier of \(original.path)"), "\(check.stdout)")
        let checks = try #require(try JSONSerialization.jsonObject(with: Data(notes.run(["check", "--json"]).stdout.utf8)) as? [[String: Any]])
        #expect(checks.map { $0["sameDocumentIdentifierAs"] as? [String] } == [[original.path], [copy.path]])

        let lookup = try notes.run(["show", "Trip"])
        #expect(lookup.status == 65, "two notes with one title is bad data (65), not a usage error (64)")
        #expect(lookup.stderr.contains(original.path) && lookup.stderr.contains(copy.path), "\(lookup.stderr)")
        #expect(lookup.stderr.contains("notes check --fix"), "\(lookup.stderr)")

        let fix = try notes.run(["check", "--fix"])
        #expect(fix.status == 0, "\(fix.stderr)")
        #expect(fix.stdout.contains("\(copy.path): now has a document identifier of its own"), "\(fix.stdout)")
        try notes.ok(["edit", "trip-copy.note", "--set", "copied"])
        let originalShown = try notes.json(["show", "trip.note", "--json"]) as? [String: Any]
        let copyShown = try notes.json(["show", "trip-copy.note", "--json"]) as? [String: Any]
        #expect(originalShown?["documentIdentifier"] as? String == identifier)
        #expect(copyShown?["documentIdentifier"] as? String != identifier)
        #expect(originalShown?["body"] as? String == "original")
        #expect(copyShown?["body"] as? String == "copied")
        #expect(try notes.run(["check"]).status == 0)
    }
}

/// A `dk-coordination-child hold` of one item, in the namespace folder the `notes` processes are
/// given (`DOCUMENTKIT_COORDINATION_DIR`): started, it holds the item until ``release()``.
final class HoldingChild {
    private let process = Process()
    private let input = Pipe()

    /// Starts the child and returns once it holds the item (`access`: read, write, delete...).
    init(namespace: URL, access: String, path: URL) throws {
        let notes = NotesRunner.executable
        process.executableURL = notes.deletingLastPathComponent().appendingPathComponent("dk-coordination-child")
        process.arguments = ["hold", namespace.path, "note", access, path.path, "60000"]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var received = ""
        while !received.contains("granted") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { throw HoldingChildFailed(output: received) }
            received += String(decoding: data, as: UTF8.self)
        }
    }

    /// Ends the hold.
    func release() {
        NotesRunner.ignoreBrokenPipes()
        try? input.fileHandleForWriting.write(contentsOf: Data("\n".utf8))
    }

    /// Waits for the child to exit; throws unless it exited 0.
    func waitForExit() throws {
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HoldingChildFailed(output: "exit \(process.terminationStatus)") }
    }

    deinit { if process.isRunning { process.terminate() } }
}

struct HoldingChildFailed: Error { let output: String }
