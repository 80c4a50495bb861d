#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation
import Testing

/// `notes serve`: what isn't a request of the API gets a 4xx with a JSON error body, never a 500,
/// and the server goes on serving.
@Suite("notes serve: bad requests")
struct ServerBadRequestTests {
    @Test(arguments: ["/api/nothing", "/api", "/api/notes/x/y/z", "/api/notes/\(UUID().uuidString)/bogus", "/nope.txt"])
    func anUnknownRouteIsA404WithAJSONError(_ path: String) async throws {
        let served = try await ServedLibrary.start()
        expectAPIError(try await served.server.get(path), 404)
    }

    @Test func anUnknownMethodOnAKnownPathIsA405WithAllow() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip")
        let cases: [(String, String, Set<String>)] = [
            ("DELETE", "/api/notes", ["GET", "HEAD", "POST"]),
            ("PATCH", "/api/notes/\(made.id)", ["GET", "HEAD", "PUT", "DELETE"]),
            ("PUT", "/api/notes/\(made.id)/versions", ["GET", "HEAD"]),
            ("GET", "/api/notes/\(made.id)/rename", ["POST"]),
            ("POST", "/api/events", ["GET", "HEAD"]),
        ]
        for (method, path, allowed) in cases {
            let reply = try await server.request(method, path, headers: ["If-Match": made.etag])
            expectAPIError(reply, 405, code: "methodNotAllowed")
            let allow = Set((reply.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allow == allowed, "\(method) \(path): Allow \(allow)")
        }
        #expect(try await server.note(made.id).etag == made.etag, "nothing changed")
    }

    @Test func headOnAGetRouteGivesTheHeadersWithoutABody() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        for path in ["/api/notes", "/api/notes/\(made.id)", "/api/notes/\(made.id)/versions"] {
            let get = try await server.get(path)
            let head = try await server.request("HEAD", path)
            #expect(head.status == 200 && head.body.isEmpty, "HEAD \(path): \(head.status)")
            #expect(head.header("Content-Type") == get.header("Content-Type") && head.etag == get.etag)
            #expect(head.header("Content-Length") == get.header("Content-Length"), "HEAD \(path)")
        }
        let missing = try await server.request("HEAD", "/api/notes/\(UUID().uuidString)")
        #expect(missing.status == 404 && missing.body.isEmpty)
    }

    /// One request, exactly as given, through a socket of its own.
    private static func raw(_ server: NotesServerProcess, _ text: String, body: Data = Data()) async throws -> LoopbackHTTP.Response {
        try await LoopbackHTTP.raw(port: server.port, Data(text.utf8) + body)
    }

    private static func expectJSONError(_ response: LoopbackHTTP.Response, _ statuses: ClosedRange<Int>, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(statuses.contains(response.status), "status \(response.status)", sourceLocation: sourceLocation)
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(
            error?["status"] as? Int == response.status && error?["message"] is String,
            "a JSON error body: \(String(decoding: response.body, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test func malformedRequestsGet4xxNever500AndTheServerGoesOn() async throws {
        let served = try await ServedLibrary.start(arguments: ["--max-body-bytes", "1000"])
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        let head = "Host: 127.0.0.1\r\nConnection: close\r\n"
        // JSON that isn't.
        let invalid = "{\"title\": \u{7F}\"x"
        let json = try await Self.raw(
            server, "POST /api/notes HTTP/1.1\r\n\(head)Content-Type: application/json\r\nContent-Length: \(invalid.utf8.count)\r\n\r\n\(invalid)")
        Self.expectJSONError(json, 400...400)
        // Bytes that aren't UTF-8 in a JSON body.
        let bytes = Data([0x7B, 0x22, 0x74, 0x69, 0x74, 0x6C, 0x65, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D])
        let binary = try await Self.raw(
            server, "POST /api/notes HTTP/1.1\r\n\(head)Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n\r\n", body: bytes)
        Self.expectJSONError(binary, 400...400)
        // A chunked JSON body over --max-body-bytes (no Content-Length to refuse it by).
        let big = Data("{\"title\": \"Big\", \"body\": \"\(String(repeating: "x", count: 3000))\"}".utf8)
        var chunked = Data("POST /api/notes HTTP/1.1\r\n\(head)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        chunked += Data("\(String(big.count, radix: 16))\r\n".utf8) + big + Data("\r\n0\r\n\r\n".utf8)
        let tooLarge = try await LoopbackHTTP.raw(port: server.port, chunked)
        Self.expectJSONError(tooLarge, 413...413)
        // Invalid percent-encoding in the path.
        for path in ["/api/notes/%ZZ", "/api/notes/%", "/api/notes/\(made.id)/attachments/%E0%A4", "/api/notes/\(made.id)/attachments/%zz"] {
            let reply = try await Self.raw(server, "GET \(path) HTTP/1.1\r\n\(head)\r\n")
            Self.expectJSONError(reply, 400...400)
        }
        Self.expectJSONError(try await Self.raw(server, "GET /api/notes/%00 HTTP/1.1\r\n\(head)\r\n"), 404...404)
        // Not a name for an attachment either: `%` is sent as %25.
        let upload = try await Self.raw(
            server, "PUT /api/notes/\(made.id)/attachments/100%ZZ HTTP/1.1\r\n\(head)If-Match: \(made.etag)\r\nContent-Length: 1\r\n\r\nx")
        Self.expectJSONError(upload, 400...400)
        // An If-Match that isn't one, and a Last-Event-ID that isn't one.
        let garbled = try await Self.raw(
            server, "DELETE /api/notes/\(made.id) HTTP/1.1\r\n\(head)If-Match: \u{01}\r\n\r\n")
        #expect((400...499).contains(garbled.status), "\(garbled.status)")
        // The server still serves, and nothing was made or changed.
        let note = try await server.note(made.id)
        #expect(note.etag == made.etag && note.object["body"] as? String == "tent\n")
        #expect(try await server.get("/api/notes").objects.count == 1)
    }

    @Test func aNoteWhoseManifestBecameAFIFOIsRefusedAtOnceAndTheOthersAreServed() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let trip = try await server.create("Trip", body: "tent\n")
        let todo = try await server.create("Todo", body: "milk\n")
        // Another program puts a FIFO where the note's manifest was: reading it must not wait for a writer.
        let manifest = served.package("trip.note").appendingPathComponent("Info.json")
        try FileManager.default.removeItem(at: manifest)
        #expect(mkfifo(manifest.path, 0o600) == 0)
        let started = ContinuousClock.now
        let note = try await server.get("/api/notes/\(trip.id)")
        #expect((400...499).contains(note.status) || note.status == 404, "GET of the note: \(note.status) \(note.text)")
        let list = try await server.get("/api/notes")
        #expect(list.status == 200)
        #expect(list.objects.contains { $0["id"] as? String == todo.id }, "the other note is listed: \(list.text)")
        let other = try await server.note(todo.id)
        #expect(other.object["body"] as? String == "milk\n")
        let put = try await server.put(trip.id, ifMatch: trip.etag, ["body": "x"])
        #expect((400...499).contains(put.status), "PUT of the note: \(put.status) \(put.text)")
        #expect(ContinuousClock.now - started < .seconds(20), "answered without waiting on the FIFO")
    }

    @Test func aHugeHeaderOrGarbageIsA400WithoutStoppingTheServer() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let huge = "GET /api/notes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n"
        let requests = [huge, "NOT HTTP AT ALL\r\n\r\n", "GET\r\n\r\n", "GET /api/notes HTTP/9.9\r\n\r\n", "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}"]
        for request in requests {
            // Refused by the HTTP parser, before any route: a bare 400 (or 431 for the header).
            let reply = try await Self.raw(server, request)
            #expect([400, 431].contains(reply.status), "\(request.prefix(40).debugDescription): \(reply.status)")
        }
        #expect(try await server.get("/api/notes").status == 200, "the server still answers")
    }

    @Test func everyErrorOfAWriteToANoteThatIsGoneIsA404() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let id = UUID().uuidString
        let etag = "\"\(String(repeating: "0", count: 64))\""
        expectAPIError(try await server.put(id, ifMatch: etag, ["body": "x"]), 404)
        expectAPIError(try await server.request("DELETE", "/api/notes/\(id)", headers: ["If-Match": etag]), 404)
        expectAPIError(try await server.request("POST", "/api/notes/\(id)/rename", headers: ["If-Match": etag], json: ["title": "X"]), 404)
        expectAPIError(try await server.get("/api/notes/\(id)/versions"), 404)
        expectAPIError(try await server.get("/api/notes/\(id)/conflicts"), 404)
        expectAPIError(try await server.request("POST", "/api/notes/\(id)/conflicts/resolve", headers: ["If-Match": etag], json: ["merge": true]), 404)
    }
}
