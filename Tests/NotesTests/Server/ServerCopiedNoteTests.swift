import DocumentKitTesting
import Foundation
import Testing

/// `cp -r` of a note makes a second package with the note's id until the copy's first save:
/// a write to the id goes to the note, never into the copy.
@Suite("notes serve: a note copied by the shell")
struct ServerCopiedNoteTests {
    @Test("without an index, a PUT to a note whose copy lists first is saved in the note and leaves the copy as it was", arguments: [false, true])
    func putGoesToTheOriginalNotItsCopy(withHistory: Bool) async throws {
        let served = try await ServedLibrary.start(environment: ["NOTES_INDEX": "off"]) { notes in
            try notes.ok(["new", "Zeta", "--body", "one\n"])
        }
        let server = served.server
        let listed = try await server.get("/api/notes")
        let id = try #require(listed.objects.first?["id"] as? String)
        var etag = try #require(try await server.note(id).etag)
        if withHistory {
            // The note's replaced state is kept as a version under its package name.
            etag = try #require(try await server.put(id, ifMatch: etag, ["body": "two\n"]).etag)
        }
        // The shell copies the note to a name listed before it.
        let copy = served.package("aaa.note")
        let cp = Process()
        cp.executableURL = URL(fileURLWithPath: "/bin/cp")
        cp.arguments = ["-r", served.package("zeta.note").path, copy.path]
        try cp.run()
        cp.waitUntilExit()
        #expect(cp.terminationStatus == 0)
        let copied = try contents(of: copy)

        let reply = try await server.put(id, ifMatch: etag, ["body": "three\n"])
        #expect(reply.status == 200, "\(reply.text)")
        let now = try await server.note(id)
        #expect(now.object["body"] as? String == "three\n", "the note has the write: \(now.text)")
        #expect(now.etag == reply.etag, "the acknowledged ETag is the note's")
        let blocks = try Data(contentsOf: served.package("zeta.note").appendingPathComponent("body.json"))
        #expect(String(decoding: blocks, as: UTF8.self).contains("three"), "the write is in the original's package")
        #expect(try contents(of: copy) == copied, "the copy is as the shell left it")
    }

    /// With the index (without it, a package that can't be opened is never a holder of the id).
    @Test("a copy still arriving (cp -r part-way: its manifest, no members yet) listed before the note is not the note: GET and PUT reach the original")
    func aCopyStillArrivingIsNotTheNote() async throws {
        let served = try await ServedLibrary.start { notes in
            try notes.ok(["new", "Zeta", "--body", "one\n"])
        }
        let server = served.server
        let id = try #require(try await server.get("/api/notes").objects.first?["id"] as? String)
        let etag = try #require(try await server.note(id).etag)
        // `cp -r` has made the copy's folder and its manifest, not yet its members.
        let copy = served.package("aaa.note")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            at: served.package("zeta.note").appendingPathComponent("Info.json"), to: copy.appendingPathComponent("Info.json"))
        // The live index has seen the copy (its watcher's quiet period is well under this).
        try await Task.sleep(for: .milliseconds(600))

        let note = try await server.note(id)
        #expect(note.status == 200, "GET reaches the note, not its copy: \(note.text)")
        #expect(note.object["body"] as? String == "one\n")
        let reply = try await server.put(id, ifMatch: etag, ["body": "two\n"])
        #expect(reply.status == 200, "PUT reaches the note, not its copy: \(reply.text)")
        let blocks = try Data(contentsOf: served.package("zeta.note").appendingPathComponent("body.json"))
        #expect(String(decoding: blocks, as: UTF8.self).contains("two"), "the write is in the original's package")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path) == ["Info.json"], "the copy is as the shell left it")
    }

    @Test("check --fix leaves the note its id and gives none to a copy still arriving (cp -r part-way) listed before it")
    func checkFixLeavesTheNoteItsIdBesideACopyStillArriving() throws {
        let directory = try TemporaryDirectory(prefix: "notes-check-fix")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Zeta", "--body", "one\n"])
        let note = notes.library.appendingPathComponent("zeta.note")
        let manifest = try Data(contentsOf: note.appendingPathComponent("Info.json"))
        let copy = notes.library.appendingPathComponent("aaa.note")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
        try manifest.write(to: copy.appendingPathComponent("Info.json"))

        _ = try notes.run(["check", "--fix"])
        #expect(try Data(contentsOf: note.appendingPathComponent("Info.json")) == manifest, "the note keeps its id (and its manifest)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path) == ["Info.json"], "the copy is as the shell left it")
        #expect(try Data(contentsOf: copy.appendingPathComponent("Info.json")) == manifest)
    }

    @Test("while a sync engine is part-way through the note (a member missing for now), a PUT is 503, never saved into a whole copy beside it; then it reaches the note")
    func aNoteBusyBesideAWholeCopyIsNotReplacedByTheCopy() async throws {
        let served = try await ServedLibrary.start { notes in
            try notes.ok(["new", "Zeta", "--body", "one\n"])
        }
        let server = served.server
        let id = try #require(try await server.get("/api/notes").objects.first?["id"] as? String)
        var etag = try #require(try await server.note(id).etag)
        // A version kept at the note's place: the store's rule names the original.
        etag = try #require(try await server.put(id, ifMatch: etag, ["body": "two\n"]).etag)
        let note = served.package("zeta.note")
        let copy = served.package("aaa.note")
        try FileManager.default.copyItem(at: note, to: copy)
        let copied = try contents(of: copy)
        let body = note.appendingPathComponent("body.json")
        let delivered = try Data(contentsOf: body)
        try FileManager.default.removeItem(at: body)
        try await Task.sleep(for: .milliseconds(600))  // the live index has seen both

        let busy = try await server.put(id, ifMatch: etag, ["body": "three\n"])
        #expect(busy.status == 503, "the note is being delivered: \(busy.text)")
        #expect(try contents(of: copy) == copied, "the copy is as the shell left it")
        try delivered.write(to: body)
        let reply = try await server.put(id, ifMatch: etag, ["body": "three\n"])
        #expect(reply.status == 200, "\(reply.text)")
        let blocks = try Data(contentsOf: body)
        #expect(String(decoding: blocks, as: UTF8.self).contains("three"), "the write is in the original's package")
        #expect(try contents(of: copy) == copied, "the copy is as the shell left it")
    }
}
