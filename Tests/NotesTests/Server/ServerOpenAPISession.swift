import DocumentKitTesting
import Foundation
import Testing

@testable import notes

/// A session against a live `notes serve` whose every response is checked against the OpenAPI
/// document (``OpenAPIConformance``): each request names its operation in OpenAPI form.
struct DocumentedSession {
    let served: ServedLibrary
    let conformance: OpenAPIConformance
    var server: NotesServerProcess { served.server }

    /// A tag no state of any note has.
    static let staleTag = "\"" + String(repeating: "0", count: 64) + "\""
    /// An id no note has.
    static let unknownID = "00000000-0000-4000-8000-000000000000"
    /// The largest JSON body the session's server takes (`--max-body-bytes`).
    static let maxBodyBytes = 4096
    /// The largest attachment it takes (`--max-attachment-bytes`).
    static let maxAttachmentBytes = 4096

    /// Sends `method` to `path` (OpenAPI form) with `parameters` filled in (percent-encoded, unless
    /// `encoded`), checks the response against the document and expects `status`.
    @discardableResult
    func send(
        _ method: String, _ path: String, _ parameters: [String: String] = [:], encoded: Bool = false, query: String = "",
        headers: [String: String] = [:], json: Any? = nil, body: Data? = nil, expecting status: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> NotesServerProcess.Reply {
        var concrete = path
        for (name, value) in parameters {
            concrete = concrete.replacingOccurrences(of: "{\(name)}", with: encoded ? value : APIPath.percentEncoded(value))
        }
        let reply = try await server.request(method, concrete + query, headers: headers, json: json, body: body)
        #expect(reply.status == status, "\(method) \(concrete)\(query): \(reply.status), not \(status): \(reply.text.prefix(300))", sourceLocation: sourceLocation)
        conformance.expect(reply, method, path, sourceLocation: sourceLocation)
        return reply
    }

    /// The refusals every write of a note's state gets from its `If-Match`: 428 without one, 400
    /// for one that isn't `*` or quoted tags, 412 for a stale one; and 404 for an unknown note.
    func refusals(_ method: String, _ path: String, _ parameters: [String: String], json: Any? = nil, body: Data? = nil) async throws {
        try await send(method, path, parameters, json: json, body: body, expecting: 428)
        try await send(method, path, parameters, headers: ["If-Match": "not-a-tag"], json: json, body: body, expecting: 400)
        try await send(method, path, parameters, headers: ["If-Match": Self.staleTag], json: json, body: body, expecting: 412)
        var unknown = parameters
        unknown["id"] = Self.unknownID
        try await send(method, path, unknown, headers: ["If-Match": "*"], json: json, body: body, expecting: 404)
    }

    /// The refusals of a JSON body: 415 for another media type, 413 beyond the limit, 400 for
    /// JSON that isn't the request's.
    func bodyRefusals(_ method: String, _ path: String, _ parameters: [String: String], wrongJSON: Any) async throws {
        let headers = ["If-Match": "*"]
        try await send(
            method, path, parameters, headers: headers.merging(["Content-Type": "text/plain"]) { $1 }, body: Data("{}".utf8), expecting: 415)
        try await send(method, path, parameters, headers: headers, json: ["title": String(repeating: "x", count: Self.maxBodyBytes)], expecting: 413)
        try await send(method, path, parameters, headers: headers, json: wrongJSON, expecting: 400)
    }

    /// `/`, the document, the listing, and the 405 of a method a path doesn't list.
    func page() async throws {
        try await send("GET", "/", expecting: 200)
        let document = try await send("GET", "/api/openapi.json", expecting: 200)
        #expect(document.body == Data(OpenAPIDocument.json.utf8), "the server serves the document it is built with")
        try await send("GET", "/api/notes", expecting: 200)
        let first = try await send("GET", "/api/notes", query: "?limit=1", expecting: 200)
        let cursor = try #require(first.header("Next-Cursor"), "a page of 1 of several notes has a next one")
        #expect(first.header("Link") == "</api/notes?limit=1&cursor=\(cursor)>; rel=\"next\"")
        try await send("GET", "/api/notes", query: "?limit=1&cursor=\(cursor)", expecting: 200)
        try await send("GET", "/api/notes", query: "?limit=0", expecting: 400)
        try await send("GET", "/api/notes", query: "?cursor=Zm9v", expecting: 400)
        let refused = try await send("PATCH", "/api/notes", expecting: 405)
        #expect(refused.header("Allow") == "GET, POST, HEAD")
        try await send("DELETE", "/api/notes/{id}/versions", ["id": Self.unknownID], expecting: 405)
    }

    /// Create, read, change, rename, delete: each status each can give.
    func notes() async throws -> (id: String, etag: String) {
        let created = try await send("POST", "/api/notes", json: ["title": "Plan", "body": "one\n", "tags": ["work"]], expecting: 201)
        let id = try #require(created.object["id"] as? String)
        #expect(created.header("Location") == "/api/notes/\(id)")
        try await send("POST", "/api/notes", json: ["title": "Plan"], expecting: 409)
        try await send("POST", "/api/notes", json: ["title": " \n "], expecting: 400)
        try await send("POST", "/api/notes", headers: ["Content-Type": "text/plain"], body: Data("{}".utf8), expecting: 415)
        try await send("POST", "/api/notes", json: ["title": String(repeating: "x", count: Self.maxBodyBytes)], expecting: 413)

        let note = try await send("GET", "/api/notes/{id}", ["id": id], expecting: 200)
        let firstTag = try #require(note.etag)
        var etag = firstTag
        try await send("GET", "/api/notes/{id}", ["id": id], headers: ["If-None-Match": etag], expecting: 304)
        try await send("GET", "/api/notes/{id}", ["id": id], headers: ["If-None-Match": "W/" + etag], expecting: 304)
        try await send("GET", "/api/notes/{id}", ["id": id], headers: ["If-None-Match": "nonsense"], expecting: 400)
        try await send("GET", "/api/notes/{id}", ["id": Self.unknownID], expecting: 404)
        try await send("GET", "/api/notes/{id}", ["id": "not-a-uuid"], expecting: 404)

        let change = ["body": "two\n", "tags": NSNull()] as [String: Any]
        try await refusals("PUT", "/api/notes/{id}", ["id": id], json: change)
        try await bodyRefusals("PUT", "/api/notes/{id}", ["id": id], wrongJSON: ["tags": "work"])
        etag = try #require(try await send("PUT", "/api/notes/{id}", ["id": id], headers: ["If-Match": etag], json: change, expecting: 200).etag)
        // The same write again with the old tag (its response lost): it is done already.
        try await send("PUT", "/api/notes/{id}", ["id": id], headers: ["If-Match": firstTag], json: change, expecting: 200)

        let rename = ["title": "Plan B"]
        try await refusals("POST", "/api/notes/{id}/rename", ["id": id], json: rename)
        try await bodyRefusals("POST", "/api/notes/{id}/rename", ["id": id], wrongJSON: ["title": ""])
        try await send("POST", "/api/notes/{id}/rename", ["id": id], headers: ["If-Match": etag], json: ["title": "Trip"], expecting: 409)
        let renamed = try await send("POST", "/api/notes/{id}/rename", ["id": id], headers: ["If-Match": etag], json: rename, expecting: 200)
        etag = try #require(renamed.etag)
        return (id, etag)
    }

    /// Attachments: put, read, refuse, delete.
    func attachments(of id: String, etag: String) async throws -> String {
        let path = "/api/notes/{id}/attachments/{name}"
        let bytes = Data("a map\n".utf8)
        try await refusals("PUT", path, ["id": id, "name": "map.txt"], body: bytes)
        try await send("PUT", path, ["id": id, "name": ".hidden"], headers: ["If-Match": "*"], body: bytes, expecting: 400)
        let tooLarge = Data(count: Self.maxAttachmentBytes + 1)
        try await send("PUT", path, ["id": id, "name": "big.bin"], headers: ["If-Match": "*"], body: tooLarge, expecting: 413)
        let put = try await send("PUT", path, ["id": id, "name": "map 1.txt"], headers: ["If-Match": etag], body: bytes, expecting: 200)
        let listed = (put.object["attachments"] as? [[String: Any]])?.first { $0["name"] as? String == "map 1.txt" }

        let got = try await send("GET", path, ["id": id, "name": "map 1.txt"], expecting: 200)
        #expect(got.body == bytes && got.header("Content-Type") == "text/plain")
        #expect(listed?["etag"] as? String == got.etag, "the note's record of the attachment has its ETag: \(put.text)")
        try await send("GET", path, ["id": id, "name": "map 1.txt"], headers: ["If-None-Match": try #require(got.etag)], expecting: 304)
        try await send("GET", path, ["id": id, "name": "atlas.txt"], expecting: 404)
        try await send("GET", path, ["id": id, "name": ".hidden"], expecting: 400)
        try await send("GET", path, ["id": Self.unknownID, "name": "map 1.txt"], expecting: 404)

        var current = try #require(put.etag)
        try await refusals("DELETE", path, ["id": id, "name": "map 1.txt"])
        try await send("DELETE", path, ["id": id, "name": "atlas.txt"], headers: ["If-Match": current], expecting: 404)
        current = try #require(try await send("DELETE", path, ["id": id, "name": "map 1.txt"], headers: ["If-Match": current], expecting: 200).etag)
        return current
    }

    /// Versions, restore, export, and deleting the note.
    func versions(of id: String, etag: String) async throws {
        let list = try await send("GET", "/api/notes/{id}/versions", ["id": id], expecting: 200)
        try await send("GET", "/api/notes/{id}/versions", ["id": Self.unknownID], expecting: 404)
        try await send("GET", "/api/notes/{id}/versions", ["id": "%ZZ"], encoded: true, expecting: 400)
        let older = try #require(list.objects.dropFirst().first?["id"] as? String, "a changed note has older versions: \(list.text)")
        let versionPath = "/api/notes/{id}/versions/{version}"
        try await send("GET", versionPath, ["id": id, "version": "current"], expecting: 200)
        try await send("GET", versionPath, ["id": id, "version": older], expecting: 200)
        try await send("GET", versionPath, ["id": id, "version": "no-such-version"], expecting: 404)
        try await send("GET", versionPath, ["id": id, "version": "%C0%80"], encoded: true, expecting: 400)

        let restore = "/api/notes/{id}/versions/{version}/restore"
        try await refusals("POST", restore, ["id": id, "version": older])
        try await send("POST", restore, ["id": id, "version": "no-such-version"], headers: ["If-Match": etag], expecting: 404)
        let restored = try await send("POST", restore, ["id": id, "version": older], headers: ["If-Match": etag], expecting: 200)

        try await send("GET", "/api/notes/{id}/export", ["id": id], expecting: 200)
        try await send("GET", "/api/notes/{id}/export", ["id": id], query: "?format=tar.gz", expecting: 200)
        try await send("GET", "/api/notes/{id}/export", ["id": id], query: "?format=rar", expecting: 400)
        try await send("GET", "/api/notes/{id}/export", ["id": Self.unknownID], expecting: 404)
        try await send("GET", "/api/export", expecting: 200)
        try await send("GET", "/api/export", query: "?format=rar", expecting: 400)

        try await refusals("DELETE", "/api/notes/{id}", ["id": id])
        try await send("DELETE", "/api/notes/{id}", ["id": id], headers: ["If-Match": try #require(restored.etag)], expecting: 204)
        try await send("GET", "/api/notes/{id}", ["id": id], expecting: 404)
    }

    /// The conflict version of `Trip`: listed, shown, refused, resolved.
    func conflicts() async throws {
        let trip = try #require(try await server.get("/api/notes").objects.first { $0["title"] as? String == "Trip" }?["id"] as? String)
        let note = try await send("GET", "/api/notes/{id}", ["id": trip], expecting: 200)
        #expect(note.header("Conflicts") == "1", "Trip has a conflict version: \(note.headers)")
        let list = try await send("GET", "/api/notes/{id}/conflicts", ["id": trip], expecting: 200)
        try await send("GET", "/api/notes/{id}/conflicts", ["id": Self.unknownID], expecting: 404)
        try await send("GET", "/api/notes/{id}/conflicts", ["id": "%"], encoded: true, expecting: 400)
        let conflict = try #require(list.objects.first?["id"] as? String, "one conflict version: \(list.text)")
        let path = "/api/notes/{id}/conflicts/resolve"
        try await refusals("POST", path, ["id": trip], json: ["keep": "current"])
        try await bodyRefusals("POST", path, ["id": trip], wrongJSON: ["keep": "current", "merge": true])
        let etag = try #require(note.etag)
        try await send("POST", path, ["id": trip], headers: ["If-Match": etag], json: ["keep": "no-such-version"], expecting: 409)
        let resolved = try await send("POST", path, ["id": trip], headers: ["If-Match": etag], json: ["keep": conflict], expecting: 200)
        #expect(resolved.object["conflicts"] as? Int == 0)
    }

    /// `GET /api/events`: the head of the stream (it doesn't end by itself).
    func events() async throws {
        let port = server.port
        let (status, headers) = try await LoopbackHTTP.offPool {
            let fd = try LoopbackHTTP.connect(port: port, timeout: 30)
            defer { close(fd) }
            try LoopbackHTTP.sendAll(fd, LoopbackHTTP.head("GET", "/api/events", headers: [("Accept", "text/event-stream")], bodyLength: nil))
            return try LoopbackHTTP.ResponseReader(fd: fd).readHead()
        }
        #expect(status == 200)
        conformance.expect(NotesServerProcess.Reply(status: status, headers: headers, body: Data()), "GET", "/api/events")
    }

    /// A conflict as a sync engine makes one in the note `Trip` (a copy of the library edited
    /// elsewhere, its members arriving as Syncthing's conflict copies).
    static func plantConflict(_ notes: NotesRunner, in directory: TemporaryDirectory) throws {
        let other = NotesRunner(library: directory.appending("Elsewhere"))
        try other.ok(["init"])
        let package = notes.library.appendingPathComponent("trip.note")
        try FileManager.default.copyItem(at: package, to: other.library.appendingPathComponent("trip.note"))
        try notes.ok(["edit", "Trip", "--set", "ours\n"])
        try other.ok(["edit", "Trip", "--set", "theirs\n"])
        for member in ["body", "Info"] {
            try FileManager.default.copyItem(
                at: other.library.appendingPathComponent("trip.note/\(member).json"),
                to: package.appendingPathComponent("\(member).sync-conflict-20261127-120000-ABCDEFG.json"))
        }
    }
}
