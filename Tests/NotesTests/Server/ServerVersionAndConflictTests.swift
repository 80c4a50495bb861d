import DocumentKitTesting
import Foundation
import Testing

/// `notes serve`: a note's versions, its conflict versions (made as sync engines make them) and
/// their resolution, and archives of notes.
@Suite("notes serve: versions, conflicts and export")
struct ServerVersionAndConflictTests {
    /// Under both `--flush` modes: each file flushed, or the file system at each ordering point.
    @Test(arguments: ["each", "file-system"])
    func versionsListTheCurrentStateAndThePreviousOnesEachWithItsETag(flush: String) async throws {
        let served = try await ServedLibrary.start(arguments: ["--flush", flush])
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        let second = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n"])
        let third = try await server.put(made.id, ifMatch: second.etag, ["body": "three\n"])
        let reply = try await server.get("/api/notes/\(made.id)/versions")
        #expect(reply.status == 200, "\(reply.text)")
        let versions = reply.objects
        #expect(versions.first?["origin"] as? String == "current" && versions.first?["etag"] as? String == third.etag)
        let etags = versions.compactMap { $0["etag"] as? String }
        #expect(etags.count == versions.count, "every version has its etag: \(versions)")
        let secondTag = try #require(second.etag)
        #expect(etags.contains(made.etag) && etags.contains(secondTag), "the states the note had: \(etags)")
        for version in versions {
            let id = try #require(version["id"] as? String)
            #expect(version["url"] as? String == "/api/notes/\(made.id)/versions/\(id)")
            #expect(version["conflict"] as? Bool == false)
        }
        // A version, read: the note as it was, with the ETag it had.
        let first = try #require(versions.first { $0["etag"] as? String == made.etag })
        let old = try await server.get(try #require(first["url"] as? String))
        #expect(old.status == 200 && old.object["body"] as? String == "one\n" && old.etag == made.etag)
        let current = try await server.get("/api/notes/\(made.id)/versions/current")
        #expect(current.status == 200 && current.object["body"] as? String == "three\n" && current.etag == third.etag)
        expectAPIError(try await server.get("/api/notes/\(made.id)/versions/no-such-version"), 404)
    }

    @Test func restoringAVersionNeedsIfMatchAndBringsItsContentsBack() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        let second = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n"])
        let versions = try await server.get("/api/notes/\(made.id)/versions").objects
        let first = try #require(versions.first { $0["etag"] as? String == made.etag }?["id"] as? String)
        let path = "/api/notes/\(made.id)/versions/\(first)/restore"
        expectAPIError(try await server.request("POST", path), 428)
        let stale = try await server.request("POST", path, headers: ["If-Match": made.etag])
        expectAPIError(stale, 412)
        #expect(stale.etag == second.etag)
        let restored = try await server.request("POST", path, headers: ["If-Match": try #require(second.etag)])
        #expect(restored.status == 200, "\(restored.text)")
        #expect(restored.object["body"] as? String == "one\n" && restored.object["id"] as? String == made.id)
        let note = try await server.note(made.id)
        #expect(note.object["body"] as? String == "one\n" && note.etag == restored.etag)
        // What it replaced is a version now.
        let after = try await server.get("/api/notes/\(made.id)/versions").objects.compactMap { $0["etag"] as? String }
        #expect(after.contains(try #require(second.etag)))
    }

    /// A conflict as Syncthing makes one: `Trip` edited here to `ours` and, in a copy of the
    /// library, to `theirs`, whose body and manifest arrive as conflict copies inside the note.
    private static func plantConflict(_ notes: NotesRunner, in directory: TemporaryDirectory, ours: String, theirs: String) throws {
        let other = NotesRunner(library: directory.appending("Other"))
        try other.ok(["init"])
        let package = notes.library.appendingPathComponent("trip.note")
        try FileManager.default.copyItem(at: package, to: other.library.appendingPathComponent("trip.note"))
        try notes.ok(["edit", "Trip", "--set", ours])
        try other.ok(["edit", "Trip", "--set", theirs])
        let stamp = "20261127-120000"
        for (member, copy) in [("body.json", "body.sync-conflict-\(stamp)-ABCDEFG.json"), ("Info.json", "Info.sync-conflict-\(stamp)-ABCDEFG.json")] {
            try FileManager.default.copyItem(
                at: other.library.appendingPathComponent("trip.note/\(member)"), to: package.appendingPathComponent(copy))
        }
    }

    /// Starts a server over a library whose note `Trip` has one conflict version.
    private static func servedConflict(after: Bool) async throws -> (ServedLibrary, id: String) {
        var planted = false
        let served = try await ServedLibrary.start { notes in
            try notes.ok(["new", "Trip", "--body", "base\n"])
            if !after {
                try plantConflict(notes, in: try TemporaryDirectory(prefix: "notes-serve-other"), ours: "ours\n", theirs: "theirs\n")
                planted = true
            }
        }
        let id = try #require(try await served.server.get("/api/notes").objects.first?["id"] as? String)
        if !planted { try plantConflict(served.notes, in: served.directory, ours: "ours\n", theirs: "theirs\n") }
        return (served, id)
    }

    @Test(arguments: [false, true])
    func aSyncEnginesConflictCopyIsAConflictVersionTheNoteShows(plantedWhileServing: Bool) async throws {
        let (served, id) = try await Self.servedConflict(after: plantedWhileServing)
        let server = served.server
        let conflicts = try await server.get("/api/notes/\(id)/conflicts")
        #expect(conflicts.status == 200)
        #expect(conflicts.objects.count == 1, "one conflict version: \(conflicts.text)")
        let conflict = try #require(conflicts.objects.first)
        #expect(conflict["conflict"] as? Bool == true && conflict["resolved"] as? Bool == false)
        let note = try await server.note(id)
        #expect(note.header("Conflicts") == "1" && note.object["conflicts"] as? Int == 1)
        #expect(note.object["body"] as? String == "ours\n")
        let version = try await server.get(try #require(conflict["url"] as? String))
        #expect(version.status == 200 && version.object["body"] as? String == "theirs\n")
        #expect(try await server.get("/api/notes").objects.first?["conflicts"] as? Int == 1)
        let members = try FileManager.default.contentsOfDirectory(atPath: served.package("trip.note").path)
        #expect(!members.contains { $0.contains("sync-conflict") }, "the copies were taken into the store: \(members)")
    }

    @Test(arguments: ["current", "version", "merge"])
    func resolvingAConflictKeepsWhatItSaysAndLeavesNone(_ choice: String) async throws {
        let (served, id) = try await Self.servedConflict(after: false)
        let server = served.server
        let note = try await server.note(id)
        let etag = try #require(note.etag)
        let conflict = try #require(try await server.get("/api/notes/\(id)/conflicts").objects.first?["id"] as? String)
        let path = "/api/notes/\(id)/conflicts/resolve"
        let body: [String: Any] = switch choice {
        case "current": ["keep": "current"]
        case "version": ["keep": conflict]
        default: ["merge": true]
        }
        expectAPIError(try await server.request("POST", path, json: body), 428)
        expectAPIError(try await server.request("POST", path, headers: ["If-Match": "\"stale\""], json: body), 412)
        let resolved = try await server.request("POST", path, headers: ["If-Match": etag], json: body)
        #expect(resolved.status == 200, "\(resolved.text)")
        let text = resolved.object["body"] as? String ?? ""
        switch choice {
        case "current": #expect(text == "ours\n" && resolved.etag == etag)
        case "version": #expect(text == "theirs\n")
        default: #expect(text.contains("ours") && text.contains("theirs"), "a merge keeps both: \(text)")
        }
        #expect(resolved.object["conflicts"] as? Int == 0)
        #expect(try await server.get("/api/notes/\(id)/conflicts").objects.isEmpty)
        let after = try await server.note(id)
        #expect(after.header("Conflicts") == nil && after.object["conflicts"] as? Int == 0, "\(after.headers) \(after.text)")
        #expect(after.object["body"] as? String == text && after.etag == resolved.etag)
    }

    @Test func resolvingNeedsKeepOrMergeAndAnUnresolvedConflictVersion() async throws {
        let (served, id) = try await Self.servedConflict(after: false)
        let server = served.server
        let etag = try #require(try await server.note(id).etag)
        let path = "/api/notes/\(id)/conflicts/resolve"
        for body: [String: Any] in [[:], ["keep": "current", "merge": true], ["merge": false]] {
            expectAPIError(try await server.request("POST", path, headers: ["If-Match": etag], json: body), 400)
        }
        expectAPIError(try await server.request("POST", path, headers: ["If-Match": etag], json: ["keep": "nope"]), 409, code: "noSuchConflict")
        #expect(try await server.get("/api/notes/\(id)/conflicts").objects.count == 1, "nothing was resolved")
    }

    @Test func aNoteExportsAsAZipThatUnzipLists() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        _ = try await server.create("Groceries", body: "milk\n")
        let reply = try await server.get("/api/notes/\(made.id)/export?format=zip")
        #expect(reply.status == 200 && reply.header("Content-Type") == "application/zip")
        #expect(reply.header("Content-Disposition")?.contains("note-\(made.id).zip") == true)
        let file = served.directory.appending("trip.zip")
        try reply.body.write(to: file)
        let listing = try runTool("unzip", ["-l", file.path])
        #expect(listing.status == 0 && listing.output.contains("trip.note/Info.json") && !listing.output.contains("groceries"), "\(listing.output)")
        let all = try await server.get("/api/export")
        #expect(all.status == 200)
        let allFile = served.directory.appending("all.zip")
        try all.body.write(to: allFile)
        let everything = try runTool("unzip", ["-l", allFile.path])
        #expect(everything.output.contains("trip.note/") && everything.output.contains("groceries.note/"), "\(everything.output)")
        let gzip = try await server.get("/api/notes/\(made.id)/export?format=tar.gz")
        #expect(gzip.status == 200 && gzip.header("Content-Type") == "application/gzip" && gzip.body.starts(with: [0x1F, 0x8B]))
    }

    @Test(arguments: ["rar", "", "ZIP%00", "../zip"])
    func anExportInAFormatThatIsNotOneIsA400(_ format: String) async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip")
        expectAPIError(try await served.server.get("/api/notes/\(made.id)/export?format=\(format)"), 400, mentioning: ["zip"])
        expectAPIError(try await served.server.get("/api/notes/\(UUID().uuidString)/export"), 404)
    }

    @Test func aNoteTooNewToChangeReadsButAPutIsA409AndLeavesItsBytes() async throws {
        let served = try await ServedLibrary.start { notes in
            try FileManager.default.copyItem(
                at: NotesRunner.formats.appendingPathComponent("future/v4-higher-min-writer.note"),
                to: notes.library.appendingPathComponent("v4-higher-min-writer.note"))
        }
        let server = served.server
        let package = served.package("v4-higher-min-writer.note")
        let before = try Self.contents(of: package)
        let listed = try await server.get("/api/notes")
        let id = try #require(listed.objects.first?["id"] as? String)
        let note = try await server.note(id)
        #expect(note.object["readOnly"] as? Bool == true && note.object["formatVersion"] as? Int == 4)
        #expect(note.object["title"] as? String == "Packing list")
        let etag = try #require(note.etag)
        let put = try await server.put(id, ifMatch: etag, ["body": "no\n"])
        expectAPIError(put, 409, mentioning: ["can view it but not edit it"])
        let rename = try await server.request("POST", "/api/notes/\(id)/rename", headers: ["If-Match": etag], json: ["title": "X"])
        expectAPIError(rename, 409)
        let attach = try await server.request("PUT", "/api/notes/\(id)/attachments/a.txt", headers: ["If-Match": etag], body: Data("a".utf8))
        expectAPIError(attach, 409)
        #expect(try Self.contents(of: package) == before, "the note's bytes on disk are as they were")
        #expect(try await server.note(id).etag == etag)
        #expect(served.files(named: ".notes-upload-").isEmpty)
    }

    /// Every file of a package, by relative path.
    static func contents(of package: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(at: package, includingPropertiesForKeys: [.isRegularFileKey]))
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            result[String(url.path.dropFirst(package.path.count))] = try Data(contentsOf: url)
        }
        return result
    }
}
