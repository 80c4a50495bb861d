#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation
import Testing

/// `notes recover`: unsaved edits autosaved as a draft survive a crash (SIGKILL) of the process.
@Suite struct NotesRecoverTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-recover")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "Pack the tent.\n"])
    }

    /// Runs `notes edit TITLE --append LINE --autosave-elsewhere-after 20` until it says it
    /// autosaved, then kills it with SIGKILL; returns its pid.
    private func editAndCrash(_ title: String, append line: String) throws -> Int32 {
        let process = Process()
        process.executableURL = NotesRunner.executable
        process.arguments = ["edit", title, "--append", line, "--autosave-elsewhere-after", "20", "--library", notes.library.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        var said = ""
        while !said.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            said += String(decoding: data, as: UTF8.self)
        }
        #expect(said == "autosaved\n")
        kill(pid, SIGKILL)
        process.waitUntilExit()
        watchdog.cancel()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        return pid
    }

    private func drafts() throws -> [[String: Any]] {
        try #require(try notes.json(["recover", "--json"]) as? [[String: Any]])
    }

    @Test func aKilledEditsAutosavedDraftIsRestored() throws {
        #expect(try drafts().isEmpty)
        let pid = try editAndCrash("Trip", append: "Bring the map.")
        // The note on disk is as it was: the edit is only in the draft.
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\n")
        let listed = try drafts()
        #expect(listed.count == 1)
        #expect(listed.first?["package"] as? String == "trip.note")
        #expect(listed.first?["title"] as? String == "Trip")
        #expect(listed.first?["ownerPID"] as? Int == Int(pid))
        let restored = try notes.ok(["recover", "Trip", "--restore"])
        #expect(restored.contains("Restored “Trip” (trip.note)"))
        #expect(try drafts().isEmpty)
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\nBring the map.\n")
        // The note as it was is kept as a version.
        let versions = try #require(try notes.json(["versions", "Trip", "--json"]) as? [String: Any])
        #expect(((versions["others"] as? [Any])?.count ?? 0) >= 1, "\(versions)")
        // The hidden drafts folder is not a note.
        #expect(try notes.ok(["list"]).split(separator: "\n").count == 1)
    }

    @Test func aDraftCanBeDiscardedByIDAndUnknownOnesAreNotFound() throws {
        _ = try editAndCrash("Trip", append: "Never mind.")
        let id = try #require(try drafts().first?["id"] as? String)
        #expect(try notes.run(["recover", "Nothing", "--restore"]).status == 66)
        #expect(try notes.ok(["recover", id, "--discard"]).contains("Discarded the draft of trip.note"))
        #expect(try drafts().isEmpty)
        #expect(try notes.ok(["recover"]) == "No drafts to recover.\n")
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\n")
    }
}
