import DocumentKitTesting
import Foundation
import Testing

/// Issue #13 §4: attachments and notes whose names look like a sync engine's conflict copies
/// (`results.conflict1`, `x.path1`, `....path1`) are files like any others; only a copy beside its
/// original of the same kind, of an engine the library lives under, is adopted.
@Suite struct NotesSyncLookalikeTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-lookalike")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "T", "--body", "text"])
    }

    /// Writes a file named `name` in the test's folder and returns its path.
    func file(_ name: String, _ contents: String) throws -> String {
        let url = directory.appending("files").appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    var attachments: URL { notes.library.appendingPathComponent("t.note/attachments") }

    @Test("an attachment named like an rclone copy (results.conflict1, x.path1, ....path1) stays in the note, which stays readable")
    func attachmentsNamedLikeCopiesStay() throws {
        try notes.ok(["attach", "T", try file("results.conflict1", "r"), try file("x.path1", "x"), try file("....path1", "d")])
        for _ in 0..<2 {
            #expect(try notes.ok(["show", "T"]).trimmingCharacters(in: .newlines) == "text")
            let check = try notes.run(["check", "T"])
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: attachments.path).sorted()
        #expect(names == ["....path1", "results.conflict1", "x.path1"])
    }

    @Test("an attachment and one named like its copy are both members: neither is adopted")
    func anAttachmentBesideOneNamedLikeItsCopy() throws {
        try notes.ok(["attach", "T", try file("results", "r"), try file("results.conflict1", "c")])
        #expect(try notes.ok(["show", "T"]).trimmingCharacters(in: .newlines) == "text")
        try notes.ok(["edit", "T", "--set", "more"])
        #expect(try notes.ok(["show", "T"]).trimmingCharacters(in: .newlines) == "more")
        let names = try FileManager.default.contentsOfDirectory(atPath: attachments.path).sorted()
        #expect(names == ["results", "results.conflict1"])
        #expect(try notes.run(["conflicts", "T"]).stdout.contains("CONFLICT") == false)
    }

    @Test("notes repair keeps an attachment named like its sibling's copy as a member: the repaired note still lists both")
    func repairKeepsAnAttachmentNamedLikeACopy() throws {
        try notes.ok(["attach", "T", try file("results", "r"), try file("results.conflict1", "c")])
        let body = notes.library.appendingPathComponent("t.note/body.json")
        let handle = try FileHandle(forWritingTo: body)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))  // `echo >> body.json`: another program's edit
        try handle.close()
        let repair = try notes.run(["repair", "T"], environment: ["NOTES_SETTLE_SECONDS": "0"])
        #expect(repair.status == 0, "\(repair.stderr)")
        let manifest = try String(contentsOf: notes.library.appendingPathComponent("t.note/Info.json"), encoding: .utf8)
        #expect(manifest.contains("attachments/results.conflict1"), "the new manifest lists the member: \(manifest)")
        #expect(try notes.ok(["show", "T"]).trimmingCharacters(in: .newlines) == "text")
        let names = try FileManager.default.contentsOfDirectory(atPath: attachments.path).sorted()
        #expect(names == ["results", "results.conflict1"])
        #expect(try notes.run(["conflicts", "T"]).stdout.contains("CONFLICT") == false)
    }

    @Test("--sync-engine names the engines whose copies are adopted; another engine's copy is left alone")
    func syncEngineOption() throws {
        let copy = notes.library.appendingPathComponent("t.note.conflict1")
        try FileManager.default.copyItem(at: notes.library.appendingPathComponent("t.note"), to: copy)
        try notes.ok(["list", "--sync-engine", "syncthing"])
        #expect(FileManager.default.fileExists(atPath: copy.path))
        let wrong = try notes.run(["list", "--sync-engine", "onedrive"])
        #expect(wrong.status == 64 && wrong.stderr.contains("onedrive"))
        try notes.ok(["list", "--sync-engine", "rclone"])
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }
}
