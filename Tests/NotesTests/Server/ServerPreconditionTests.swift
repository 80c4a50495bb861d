import DocumentKitTesting
import Foundation
import Testing

/// `notes serve`: strong ETags and the preconditions of every change (RFC 9110 §13: 428, 412, 304).
@Suite("notes serve: ETags and preconditions")
struct ServerPreconditionTests {
    @Test func aPutWithoutIfMatchIsA428AndChangesNothing() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip", body: "one\n")
        let reply = try await served.server.put(made.id, ifMatch: nil, ["body": "two\n"])
        expectAPIError(reply, 428, code: "preconditionRequired", mentioning: ["If-Match"])
        #expect(reply.header("Cache-Control") == "no-store")
        #expect(try await served.server.note(made.id).object["body"] as? String == "one\n")
    }

    @Test func aPutWithAStaleETagIsA412WithTheCurrentETagInHeaderAndBody() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        let first = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n"])
        #expect(first.status == 200)
        let current = try #require(first.etag)
        let stale = try await server.put(made.id, ifMatch: made.etag, ["body": "three\n"])
        expectAPIError(stale, 412, code: "preconditionFailed")
        #expect(stale.etag == current && stale.error["etag"] as? String == current)
        #expect(try await server.note(made.id).object["body"] as? String == "two\n")
    }

    @Test func aWeakETagNeverMatchesIfMatch() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip", body: "one\n")
        let reply = try await served.server.put(made.id, ifMatch: "W/" + made.etag, ["body": "two\n"])
        expectAPIError(reply, 412, code: "preconditionFailed")
        #expect(reply.etag == made.etag)
        #expect(try await served.server.note(made.id).object["body"] as? String == "one\n")
    }

    @Test(arguments: ["abc", "\"unterminated", "\"a\" \"b\"", "\"a\",", ",", "W/abc", "\"a b\""])
    func aGarbledIfMatchIsA400(_ value: String) async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip", body: "one\n")
        expectAPIError(try await served.server.put(made.id, ifMatch: value, ["body": "two\n"]), 400, code: "badRequest")
        let delete = try await served.server.request("DELETE", "/api/notes/\(made.id)", headers: ["If-Match": value])
        expectAPIError(delete, 400, code: "badRequest")
        expectAPIError(try await served.server.get("/api/notes/\(made.id)", headers: ["If-None-Match": value]), 400)
        #expect(try await served.server.note(made.id).object["body"] as? String == "one\n")
    }

    @Test func aPutWithTheCurrentETagIs200WithTheNewETag() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n", tags: ["a"])
        let reply = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n"])
        #expect(reply.status == 200, "\(reply.text)")
        let etag = try #require(reply.etag)
        #expect(etag != made.etag && reply.object["etag"] as? String == etag)
        #expect(reply.object["body"] as? String == "two\n" && reply.object["tags"] as? [String] == ["a"], "what is left out stays")
        let note = try await server.note(made.id)
        #expect(note.etag == etag && note.object["body"] as? String == "two\n")
        #expect(try served.notes.ok(["show", "Trip"]) == "two\n")
        // A list of tags, one of them current, and `*`, match too.
        let listed = try await server.put(made.id, ifMatch: "\"nope\", \(etag)", ["tags": ["b"]])
        #expect(listed.status == 200 && listed.object["tags"] as? [String] == ["b"])
        let any = try await server.put(made.id, ifMatch: "*", ["body": "three\n"])
        #expect(any.status == 200 && any.object["body"] as? String == "three\n")
    }

    @Test func aRetriedPutWhoseChangeIsAlreadyMadeIs200WithTheSameETag() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        let first = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n", "tags": ["t"]])
        #expect(first.status == 200)
        // The response was lost: the client sends the same request again, with the tag it had.
        let retry = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n", "tags": ["t"]])
        #expect(retry.status == 200, "\(retry.text)")
        #expect(retry.etag == first.etag && retry.object["body"] as? String == "two\n")
        #expect(try await server.note(made.id).etag == first.etag)
        // Another body with the old tag is a real conflict.
        expectAPIError(try await server.put(made.id, ifMatch: made.etag, ["body": "other\n"]), 412)
    }

    @Test func twoConcurrentPutsFromOneBaseGiveExactlyOne200AndOne412() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        for round in 0..<3 {
            let made = try await server.create("Race \(round)", body: "base\n")
            async let a = server.put(made.id, ifMatch: made.etag, ["body": "from a\n"])
            async let b = server.put(made.id, ifMatch: made.etag, ["body": "from b\n"])
            let replies = try await [a, b]
            let statuses = replies.map(\.status).sorted()
            #expect(statuses == [200, 412], "round \(round): \(replies.map { "\($0.status) \($0.text)" })")
            guard let winner = replies.first(where: { $0.status == 200 }), let loser = replies.first(where: { $0.status == 412 }) else { continue }
            #expect(loser.etag == winner.etag, "the 412 names the winner's state")
            let note = try await server.note(made.id)
            #expect(note.etag == winner.etag && note.object["body"] as? String == winner.object["body"] as? String)
        }
    }

    @Test func ifNoneMatchWithTheCurrentETagIsA304WithTheETagAndNoBody() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        let path = "/api/notes/\(made.id)"
        for value in [made.etag, "W/" + made.etag, "\"other\", \(made.etag)", "*"] {
            let reply = try await server.get(path, headers: ["If-None-Match": value])
            #expect(reply.status == 304, "If-None-Match: \(value) gave \(reply.status)")
            #expect(reply.etag == made.etag && reply.body.isEmpty)
        }
        let head = try await server.request("HEAD", path, headers: ["If-None-Match": made.etag])
        #expect(head.status == 304 && head.etag == made.etag)
        let other = try await server.get(path, headers: ["If-None-Match": "\"other\""])
        #expect(other.status == 200 && other.object["body"] as? String == "one\n")
        // After a change the old tag no longer matches.
        let put = try await server.put(made.id, ifMatch: made.etag, ["body": "two\n"])
        let changed = try await server.get(path, headers: ["If-None-Match": made.etag])
        #expect(changed.status == 200 && changed.etag == put.etag && changed.object["body"] as? String == "two\n")
    }

    @Test func aSaveThatChangesNothingKeepsTheETag() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip", body: "one\n", tags: ["a"])
        let same = try await served.server.put(made.id, ifMatch: made.etag, ["body": "one\n", "tags": ["a"]])
        #expect(same.status == 200 && same.etag == made.etag)
    }

    @Test func anEditByAnotherProcessChangesTheETagAndTheOldOneGets412() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "one\n")
        try served.notes.ok(["edit", "Trip", "--append", "from the CLI"])
        let note = try await server.note(made.id)
        #expect(note.etag != made.etag && (note.object["body"] as? String)?.contains("from the CLI") == true)
        let stale = try await server.put(made.id, ifMatch: made.etag, ["body": "lost?\n"])
        expectAPIError(stale, 412)
        #expect(stale.etag == note.etag)
        #expect(try served.notes.ok(["show", "Trip"]).contains("from the CLI"))
    }
}
