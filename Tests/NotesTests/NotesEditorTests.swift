import DocumentKitTesting
import Foundation
import Testing

/// `notes edit TITLE --editor`: the body in `$EDITOR`, saved at exit; other processes' changes
/// meanwhile are reloaded into the editor's file or kept as a conflict version, never lost.
@Suite struct NotesEditorTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-editor")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "Pack the tent.\n"])
    }

    /// Writes an executable shell script `name` into the test's folder; returns its path.
    private func script(_ name: String, _ body: String) throws -> String {
        let path = directory.appending(name).path
        try Data(("#!/bin/sh\n" + body).utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// Shell lines that wait (30 s at most: the test may wait for a thread) until `file` exists.
    private func waitFor(_ file: String) -> String {
        "i=0; while [ ! -e '\(file)' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
    }

    /// Waits (30 s at most) until `path` exists.
    private func waitUntilExists(_ path: String) async {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !FileManager.default.fileExists(atPath: path) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func conflicts() throws -> [[String: Any]] {
        try #require(try notes.json(["conflicts", "--json"]) as? [[String: Any]])
    }

    @Test func theEditorsTextIsSavedWhenItExits() throws {
        // EDITOR may hold arguments: it runs through the shell.
        let editor = try script("append.sh", "echo \"$1\" > /dev/null\necho \"$2\" >> \"$2\"\n")
        let result = try notes.run(["edit", "Trip", "--editor"], environment: ["EDITOR": "\(editor) --flag"])
        #expect(result.status == 0, "\(result.stderr)")
        // The script appended the file's own path: the editor got the temporary file.
        let body = try notes.ok(["show", "Trip"])
        #expect(body.hasPrefix("Pack the tent.\n") && body.hasSuffix(".md\n"), "\(body)")
        #expect(result.stdout == "Saved “Trip”.\n")
        #expect(try conflicts().isEmpty)
    }

    @Test func anEditorThatChangesNothingOrFailsSavesNothing() throws {
        let unchanged = try notes.run(["edit", "Trip", "--editor"], environment: ["EDITOR": "true"])
        #expect(unchanged.status == 0 && unchanged.stdout == "“Trip” unchanged.\n", "\(unchanged)")
        let failed = try notes.run(["edit", "Trip", "--editor"], environment: ["EDITOR": "sh -c 'echo lost >> \"$1\"; exit 3' sh"])
        #expect(failed.status == 74 && failed.stderr.contains("status 3"), "\(failed)")
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\n")
        #expect(try notes.run(["edit", "Trip", "--editor", "--append", "x"]).status == 64)
    }

    /// Runs `notes edit Trip --editor` with `editor` in the background, waits until it said
    /// `started`, appends `X` from another process, and lets the editor go on.
    private func editWhileAnotherProcessAppends(editor: String) async throws -> NotesRunner.Result {
        let notes = self.notes
        // On a thread of its own: the test's (few) cooperative threads stay free.
        async let editing = withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try notes.run(["edit", "Trip", "--editor"], environment: ["EDITOR": editor]) })
            }
        }
        await waitUntilExists(directory.appending("started").path)
        try notes.ok(["edit", "Trip", "--append", "X"])
        _ = FileManager.default.createFile(atPath: directory.appending("marker").path, contents: nil)
        return try await editing
    }

    @Test func anUnchangedEditorsFileFollowsAnotherProcessesChangeAndKeepsIt() async throws {
        let started = directory.appending("started").path
        let seen = directory.appending("seen").path
        // Waits for the marker, then until the reload reached its file (10 s at most); changes nothing.
        let editor = try script(
            "idle.sh",
            "touch '\(started)'\n" + waitFor(directory.appending("marker").path)
                + "i=0; while ! grep -q '^X$' \"$1\" && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\ncp \"$1\" '\(seen)'\n")
        let result = try await editWhileAnotherProcessAppends(editor: editor)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: seen, encoding: .utf8) == "Pack the tent.\nX\n", "the editor's file was reloaded")
        #expect(result.stdout.contains("unchanged") && result.stdout.contains("reloaded"), "\(result.stdout)")
        // The other process's change is the note: the editor's exit did not write over it.
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\nX\n")
        #expect(try conflicts().isEmpty)
    }

    @Test func anEditorWithItsOwnChangesSavesThemAndKeepsTheOtherProcessesAsAConflict() async throws {
        let started = directory.appending("started").path
        // An editor with a buffer: it read the file at the start, and writes its own text at the end.
        let editor = try script(
            "buffer.sh",
            "cp \"$1\" \"$1.buffer\"; echo Mine >> \"$1.buffer\"\ntouch '\(started)'\n" + waitFor(directory.appending("marker").path)
                + "sleep 0.3\ncp \"$1.buffer\" \"$1\"\n")
        let result = try await editWhileAnotherProcessAppends(editor: editor)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Saved “Trip”.\n")
        #expect(result.stderr.contains("kept as a conflict"), "\(result.stderr)")
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\nMine\n")
        let listed = try conflicts()
        #expect(listed.count == 1 && listed.first?["title"] as? String == "Trip", "\(listed)")
        let versions = try #require(listed.first?["conflicts"] as? [[String: Any]])
        #expect(versions.count == 1, "\(versions)")
        let id = try #require(versions.first?["id"] as? String)
        let kept = try notes.run(["show", "Trip", "--version", id])
        #expect(kept.stdout == "Pack the tent.\nX\n", "\(kept)")
    }
}
