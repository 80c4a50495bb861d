#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation
import Testing

/// `notes watch TITLE` stopped with `SIGSTOP` must not lock the note: the first command waits for
/// it once (the presenter deadline, 5 s), later ones skip it, and it catches up when continued.
@Suite struct NotesStoppedWatcherTests {
    static let missedDeadline = "did not answer within the deadline"

    @Test("with notes watch TITLE stopped, new, show and edit of the note get through, only the first waits (its error before the warning), and the watcher reloads when continued")
    func stoppedWatcherDoesNotLockTheNote() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-stopped-watch")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "one"])
        let watcher = try NotesWatchTests.Watcher(notes: notes, directory: directory, arguments: ["Trip"])
        try await Task.sleep(for: .milliseconds(500))  // let it open the note and start presenting
        let pid = watcher.process.processIdentifier
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }

        // The first command waits for the stopped watcher once. It fails (the title exists): a
        // person reads its error first, then the library's warning, with no log timestamps.
        let create = try notes.run(["new", "Trip", "--body", "again"])
        #expect(create.status == 73, "\(create.stderr)")
        let lines = create.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("notes: “Trip”: a note titled") == true, "the error comes first: \(create.stderr)")
        #expect(
            lines.dropFirst().contains { $0.hasPrefix("notes: warning: ") && $0.contains(Self.missedDeadline) },
            "the first command waits for the stopped watcher once, and says so after the error: \(create.stderr)")
        #expect(!lines.contains { $0.first?.isNumber == true }, "no timestamped log lines: \(create.stderr)")
        let show = try notes.run(["show", "Trip"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("one"))
        #expect(!show.stderr.contains(Self.missedDeadline), "a later command waited again: \(show.stderr)")
        let edit = try notes.run(["edit", "Trip", "--append", "two"])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(!edit.stderr.contains(Self.missedDeadline), "a later command waited again: \(edit.stderr)")
        #expect(try notes.ok(["show", "Trip"]).contains("two"))

        kill(pid, SIGCONT)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !watcher.lines().contains(where: { $0["event"] == "reloaded" }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(watcher.lines().contains { $0["event"] == "reloaded" && $0["title"] == "Trip" }, "\(watcher.lines())")
        // Running again, it is asked again, and the edit made while it was stopped stays.
        let again = try notes.run(["edit", "Trip", "--append", "three"])
        #expect(again.status == 0 && !again.stderr.contains(Self.missedDeadline), "\(again.stderr)")
        let body = try notes.ok(["show", "Trip"])
        #expect(body.contains("one") && body.contains("two") && body.contains("three"), "\(body)")
    }
}
