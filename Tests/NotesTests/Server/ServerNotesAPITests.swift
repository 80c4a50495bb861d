import DocumentKitTesting
import Foundation
import Testing

/// `notes serve`: listing, reading, creating, renaming and deleting notes over HTTP.
@Suite("notes serve: the notes API")
struct ServerNotesAPITests {
    @Test func listingGivesEveryNoteWithItsIdTitleUrlEtagTagsAndModified() async throws {
        let served = try await ServedLibrary.start { notes in
            try notes.ok(["new", "Trip", "--body", "tent\n", "--tag", "travel"])
            try notes.ok(["new", "Groceries", "--body", "milk\n"])
        }
        let server = served.server
        let made = try await server.create("Ideas", body: "one\n", tags: ["x", "y"])
        let reply = try await server.get("/api/notes")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true)
        let notes = reply.objects
        #expect(notes.map { $0["title"] as? String } == ["Groceries", "Ideas", "Trip"])
        for note in notes {
            let id = try #require(note["id"] as? String)
            #expect(UUID(uuidString: id) != nil)
            #expect(note["url"] as? String == "/api/notes/\(id)")
            #expect(note["tags"] is [String] && note["modified"] is String)
            let single = try await server.note(id)
            #expect(note["etag"] as? String == single.etag, "the listing's etag is the note's ETag")
        }
        let ideas = try #require(notes.first { $0["id"] as? String == made.id })
        #expect(ideas["tags"] as? [String] == ["x", "y"] && ideas["etag"] as? String == made.etag)
        #expect(notes.first { $0["title"] as? String == "Trip" }?["tags"] as? [String] == ["travel"])
    }

    @Test func listingPagesFollowNextCursorUntilTheLastPageHasNone() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        var ids: [String] = []
        for title in ["E", "b", "A", "d", "C"] { ids.append(try await server.create(title).id) }
        var titles: [String] = []
        var seen: [String] = []
        var path = "/api/notes?limit=2"
        var pages = 0
        while true {
            let reply = try await server.get(path)
            #expect(reply.status == 200, "\(path): \(reply.text)")
            pages += 1
            titles += reply.objects.compactMap { $0["title"] as? String }
            seen += reply.objects.compactMap { $0["id"] as? String }
            guard let next = reply.header("Next-Cursor") else {
                #expect(reply.header("Link") == nil)
                break
            }
            let link = try #require(reply.header("Link"))
            #expect(link == "</api/notes?limit=2&cursor=\(next)>; rel=\"next\"")
            path = String(link.dropFirst().prefix { $0 != ">" })
            #expect(pages < 10, "the pages never end")
            if pages >= 10 { break }
        }
        #expect(pages == 3)
        #expect(titles == ["A", "b", "C", "d", "E"])
        #expect(Set(seen) == Set(ids) && seen.count == ids.count)
    }

    @Test(arguments: ["limit=0", "limit=-1", "limit=abc", "limit=1001", "limit=", "cursor=%21%21%21", "cursor=Zm9v"])
    func aBadLimitOrCursorIsA400(_ query: String) async throws {
        let served = try await ServedLibrary.start()
        _ = try await served.server.create("A")
        expectAPIError(try await served.server.get("/api/notes?\(query)"), 400, code: "badRequest")
    }

    @Test func aNoteGivesItsBodyMetadataAndAttachmentsWithItsETag() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "Pack the tent.\n", tags: ["travel"])
        let reply = try await server.note(made.id)
        let note = reply.object
        #expect(note["id"] as? String == made.id && note["title"] as? String == "Trip")
        #expect(note["body"] as? String == "Pack the tent.\n" && note["tags"] as? [String] == ["travel"])
        #expect((note["attachments"] as? [Any])?.isEmpty == true)
        #expect(note["created"] is String && note["modified"] is String && note["formatVersion"] as? Int == 3)
        #expect(note["readOnly"] as? Bool == false && note["conflicts"] as? Int == 0)
        let etag = try #require(reply.etag)
        #expect(note["etag"] as? String == etag && etag == made.etag)
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
        #expect(reply.header("Cache-Control")?.contains("no-transform") == true)
    }

    @Test(arguments: ["00000000-0000-0000-0000-000000000000", "garbage", "..", "%2e%2e", "1234"])
    func anUnknownOrGarbageIdIsA404(_ id: String) async throws {
        let served = try await ServedLibrary.start { try $0.ok(["new", "Trip"]) }
        expectAPIError(try await served.server.get("/api/notes/\(id)"), 404)
    }

    @Test func creatingANoteGives201WithLocationAndETag() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let reply = try await server.request("POST", "/api/notes", json: ["title": "Trip", "body": "tent\n", "tags": ["a"]])
        #expect(reply.status == 201)
        let id = try #require(reply.object["id"] as? String)
        #expect(reply.header("Location") == "/api/notes/\(id)")
        #expect(reply.etag != nil && reply.etag == reply.object["etag"] as? String)
        #expect(try await server.note(id).etag == reply.etag)
        #expect(try served.notes.ok(["show", "Trip"]) == "tent\n", "the CLI reads what the server made")
    }

    @Test func creatingANoteWithATitleInUseIsA409() async throws {
        let served = try await ServedLibrary.start { try $0.ok(["new", "Trip"]) }
        let reply = try await served.server.request("POST", "/api/notes", json: ["title": "Trip"])
        expectAPIError(reply, 409)
        #expect(try await served.server.get("/api/notes").objects.count == 1)
    }

    @Test(arguments: [
        (#"{"title": "A", "#, ""), (#"{"title": 5}"#, "title"), (#"{"title": "A", "tags": "x"}"#, "tags"),
        (#"{"body": "no title"}"#, "title"), (#"["title"]"#, "object"), (#"{"title": "  "}"#, "title"),
        (#"{"title": "A", "tags": [""]}"#, "tags"), (#"{"title": "two\nlines"}"#, "title"),
    ])
    func aBodyThatIsNotANewNoteIsA400NamingTheField(_ body: String, _ field: String) async throws {
        let served = try await ServedLibrary.start()
        let reply = try await served.server.request(
            "POST", "/api/notes", headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        expectAPIError(reply, 400, code: "badRequest", mentioning: field.isEmpty ? [] : [field])
        #expect(try await served.server.get("/api/notes").objects.isEmpty)
    }

    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", nil])
    func aBodyThatIsNotJSONIsA415(_ contentType: String?) async throws {
        let served = try await ServedLibrary.start()
        let headers = contentType.map { ["Content-Type": $0] } ?? [:]
        let reply = try await served.server.request("POST", "/api/notes", headers: headers, body: Data(#"{"title": "A"}"#.utf8))
        expectAPIError(reply, 415)
    }

    @Test func aBodyOverMaxBodyBytesIsA413() async throws {
        let served = try await ServedLibrary.start(arguments: ["--max-body-bytes", "200"])
        let server = served.server
        let big = try await server.request("POST", "/api/notes", json: ["title": "Big", "body": String(repeating: "x", count: 500)])
        expectAPIError(big, 413)
        let small = try await server.request("POST", "/api/notes", json: ["title": "Small", "body": "x"])
        #expect(small.status == 201)
        let id = try #require(small.object["id"] as? String)
        let put = try await server.put(id, ifMatch: small.etag, ["body": String(repeating: "y", count: 500)])
        expectAPIError(put, 413)
        #expect(try await server.note(id).object["body"] as? String == "x")
    }

    @Test func renamingNeedsIfMatchAndChangesTheTitleButNotTheId() async throws {
        let served = try await ServedLibrary.start { try $0.ok(["new", "Groceries"]) }
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        let path = "/api/notes/\(made.id)/rename"
        expectAPIError(try await server.request("POST", path, json: ["title": "Voyage"]), 428, code: "preconditionRequired")
        let stale = try await server.request("POST", path, headers: ["If-Match": "\"0000\""], json: ["title": "Voyage"])
        expectAPIError(stale, 412, code: "preconditionFailed")
        #expect(stale.etag == made.etag)
        let taken = try await server.request("POST", path, headers: ["If-Match": made.etag], json: ["title": "Groceries"])
        expectAPIError(taken, 409)
        let renamed = try await server.request("POST", path, headers: ["If-Match": made.etag], json: ["title": "Voyage"])
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect(renamed.object["id"] as? String == made.id && renamed.object["title"] as? String == "Voyage")
        #expect(renamed.etag != nil && renamed.etag != made.etag)
        let note = try await server.note(made.id)
        #expect(note.object["title"] as? String == "Voyage" && note.object["body"] as? String == "tent\n")
        #expect(note.etag == renamed.etag)
        #expect(FileManager.default.fileExists(atPath: served.package("voyage.note").path))
        #expect(!FileManager.default.fileExists(atPath: served.package("trip.note").path))
        #expect(try served.notes.ok(["show", "Voyage"]) == "tent\n")
        // The same rename again, with the tag it had: already done, so not a 412.
        let retried = try await server.request("POST", path, headers: ["If-Match": made.etag], json: ["title": "Voyage"])
        #expect(retried.status == 200 && retried.etag == renamed.etag, "\(retried.status) \(retried.text)")
    }

    @Test func deletingNeedsIfMatchThenIs204And404AfterAndKeepsTheLastStateAsAVersion() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "The last words of the trip.\n")
        let path = "/api/notes/\(made.id)"
        expectAPIError(try await server.request("DELETE", path), 428, code: "preconditionRequired")
        let stale = try await server.request("DELETE", path, headers: ["If-Match": "\"1234\""])
        expectAPIError(stale, 412, code: "preconditionFailed")
        #expect(stale.etag == made.etag && stale.error["etag"] as? String == made.etag)
        #expect(FileManager.default.fileExists(atPath: served.package("trip.note").path))
        let deleted = try await server.request("DELETE", path, headers: ["If-Match": made.etag])
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: served.package("trip.note").path))
        expectAPIError(try await server.get(path), 404)
        expectAPIError(try await server.request("DELETE", path, headers: ["If-Match": made.etag]), 404)
        #expect(try await server.get("/api/notes").objects.isEmpty)
        // The note's last state is in the version store.
        let store = served.library.appendingPathComponent(".documentkit-versions/documents")
        let enumerator = try #require(FileManager.default.enumerator(at: store, includingPropertiesForKeys: nil))
        let kept = enumerator.compactMap { $0 as? URL }.filter { !$0.hasDirectoryPath }.compactMap { try? Data(contentsOf: $0) }
        #expect(kept.contains { String(decoding: $0, as: UTF8.self).contains("The last words of the trip.") })
    }
}
