import DocumentKitTesting
import Foundation
import Testing

@Suite struct NotesDamagedDataTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-damaged")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Good", "--body", "fine"])
        try notes.ok(["new", "Bad", "--body", "soon broken"])
    }

    private var badManifest: URL { notes.library.appendingPathComponent("bad.note/Info.json") }

    @Test("a note with a malformed manifest exits 65 naming the file; the file is untouched")
    func malformedManifest() throws {
        try Data("{ nope".utf8).write(to: badManifest)
        let result = try notes.run(["show", "bad"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("bad.note"))
        #expect(result.stderr.contains("Info.json"))
        #expect(try Data(contentsOf: badManifest) == Data("{ nope".utf8))
        // list shows the good note and warns about the bad one.
        let list = try notes.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("Good"))
        #expect(list.stderr.contains("bad.note"))
    }

    @Test("a note from a newer format version that needs a newer reader is refused with the versions in the message")
    func newerFormat() throws {
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: badManifest)) as? [String: Any])
        manifest["formatVersion"] = 4
        manifest["minReaderVersion"] = 4
        manifest["minWriterVersion"] = 4
        try JSONSerialization.data(withJSONObject: manifest).write(to: badManifest)
        let result = try notes.run(["show", "bad"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("format 4, this app reads up to 3"))
    }

    @Test("a missing body is a note a sync may still be delivering (exit 75), then, settled, bad data (65), not a crash")
    func missingBody() throws {
        try FileManager.default.removeItem(at: notes.library.appendingPathComponent("bad.note/body.json"))
        let result = try notes.run(["show", "bad"])
        #expect(result.status == 75)
        #expect(result.stderr.contains("body.json") && result.stderr.contains("0 of 1 members match"))
        let settled = try notes.run(["show", "bad"], environment: ["NOTES_SETTLE_SECONDS": "0"])
        #expect(settled.status == 65)
        #expect(settled.stderr.contains("body.json") && settled.stderr.contains("0 of 1 members match"))
    }

    @Test("fields and members this version does not know survive an edit")
    func unknownContentIsKept() throws {
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: badManifest)) as? [String: Any])
        manifest["futureField"] = ["nested": true]
        try JSONSerialization.data(withJSONObject: manifest).write(to: badManifest)
        let extra = notes.library.appendingPathComponent("bad.note/future-member.bin")
        try Data([1, 2, 3]).write(to: extra)
        try notes.ok(["edit", "Bad", "--append", "more"])
        let after = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: badManifest)) as? [String: Any])
        #expect((after["futureField"] as? [String: Bool]) == ["nested": true])
        #expect(try Data(contentsOf: extra) == Data([1, 2, 3]))
        #expect(try notes.ok(["show", "Bad"]) == "soon broken\nmore\n")
    }
}
