import DocumentKitTesting
import Foundation
import Testing

/// `notes serve`: attachments uploaded and downloaded as streams, each with its own strong ETag.
@Suite("notes serve: attachments")
struct ServerAttachmentTests {
    /// Bytes that are not all alike: `count` of them, from a simple generator.
    static func bytes(_ count: Int, seed: UInt64 = 1) -> Data {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return Data(bytes)
    }

    private static func attachment(_ reply: NotesServerProcess.Reply, _ name: String) -> [String: Any]? {
        (reply.object["attachments"] as? [[String: Any]])?.first { $0["name"] as? String == name }
    }

    @Test func anUploadWithIfMatchIsListedWithItsSizeAndSHA256AndDownloadsAsItsBytes() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        let data = Self.bytes(100_000)
        let path = "/api/notes/\(made.id)/attachments/map.png"
        let put = try await server.request("PUT", path, headers: ["If-Match": made.etag, "Content-Type": "image/png"], body: data)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.etag != nil && put.etag != made.etag && put.object["etag"] as? String == put.etag)
        let sha = try quotedSHA256(of: data)
        let listed = try #require(Self.attachment(try await server.note(made.id), "map.png"))
        #expect(listed["size"] as? Int == data.count && listed["etag"] as? String == sha)
        #expect(listed["url"] as? String == path && listed["mediaType"] as? String == "image/png")
        let get = try await server.get(path)
        #expect(get.status == 200 && get.body == data)
        #expect(get.etag == sha && get.header("Content-Type") == "image/png" && get.header("Content-Length") == "\(data.count)")
        let head = try await server.request("HEAD", path)
        #expect(head.status == 200 && head.etag == sha && head.header("Content-Length") == "\(data.count)" && head.body.isEmpty)
        let cached = try await server.get(path, headers: ["If-None-Match": sha])
        #expect(cached.status == 304 && cached.etag == sha && cached.body.isEmpty)
        // The CLI's note has it too, with these bytes.
        let file = served.package("trip.note").appendingPathComponent("attachments/map.png")
        #expect(try Data(contentsOf: file) == data)
        #expect(served.files(named: ".notes-upload-").isEmpty)
    }

    @Test func anUploadNeedsIfMatchAndAStaleOneIsA412() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip", body: "tent\n")
        let path = "/api/notes/\(made.id)/attachments/a.txt"
        expectAPIError(try await server.request("PUT", path, body: Data("x".utf8)), 428, code: "preconditionRequired")
        let stale = try await server.request("PUT", path, headers: ["If-Match": "\"old\""], body: Data("x".utf8))
        expectAPIError(stale, 412)
        #expect(stale.etag == made.etag)
        let note = try await server.note(made.id)
        #expect((note.object["attachments"] as? [Any])?.isEmpty == true && note.etag == made.etag)
        #expect(served.files(named: ".notes-upload-").isEmpty)
    }

    @Test func aMultiMegabyteUploadComesBackByteForByte() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip")
        let data = Self.bytes(6 << 20, seed: 7)
        let path = "/api/notes/\(made.id)/attachments/photo.bin"
        let put = try await server.request("PUT", path, headers: ["If-Match": made.etag], body: data)
        #expect(put.status == 200, "\(put.text)")
        let get = try await server.get(path)
        #expect(get.status == 200 && get.body.count == data.count && get.body == data)
        let sha = try quotedSHA256(of: data)
        #expect(get.etag == sha)
    }

    @Test func anEmptyUploadIsAnEmptyAttachment() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip")
        let path = "/api/notes/\(made.id)/attachments/empty.txt"
        let put = try await served.server.request("PUT", path, headers: ["If-Match": made.etag], body: Data())
        #expect(put.status == 200, "\(put.text)")
        #expect(Self.attachment(put, "empty.txt")?["size"] as? Int == 0)
        let get = try await served.server.get(path)
        let empty = try quotedSHA256(of: Data())
        #expect(get.status == 200 && get.body.isEmpty && get.etag == empty)
    }

    @Test func anUploadOverMaxAttachmentBytesIsA413AndLeavesNoUploadFile() async throws {
        let served = try await ServedLibrary.start(arguments: ["--max-attachment-bytes", "4096"])
        let server = served.server
        let made = try await server.create("Trip")
        let path = "/api/notes/\(made.id)/attachments/big.bin"
        let exact = try await server.request("PUT", "/api/notes/\(made.id)/attachments/exact.bin", headers: ["If-Match": made.etag], body: Self.bytes(4096))
        #expect(exact.status == 200, "exactly the limit is taken: \(exact.text)")
        let etag = try #require(exact.etag)
        // Announced by Content-Length.
        let announced = try await server.request("PUT", path, headers: ["If-Match": etag], body: Self.bytes(4097))
        expectAPIError(announced, 413)
        // Not announced: chunked, found out while streaming.
        var raw = Data("PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nIf-Match: \(etag)\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<4 {
            raw.append(Data("800\r\n".utf8))
            raw.append(Self.bytes(2048))
            raw.append(Data("\r\n".utf8))
        }
        raw.append(Data("0\r\n\r\n".utf8))
        let streamed = try await LoopbackHTTP.raw(port: server.port, raw)
        #expect(streamed.status == 413, "\(String(decoding: streamed.body, as: UTF8.self))")
        let note = try await server.note(made.id)
        #expect(note.etag == etag && Self.attachment(note, "big.bin") == nil)
        #expect(served.files(named: ".notes-upload-").isEmpty, "an upload refused leaves no file behind")
    }

    @Test(arguments: ["..", "%2e%2e", ".hidden", "a%2Fb", "%2Fetc%2Fpasswd", "a%00b", ".notes-upload-x"])
    func aNameThatWouldEscapeTheNoteIsA400(_ name: String) async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip")
        let path = "/api/notes/\(made.id)/attachments/\(name)"
        expectAPIError(try await server.request("PUT", path, headers: ["If-Match": made.etag], body: Data("x".utf8)), 400, code: "badRequest")
        expectAPIError(try await server.get(path), 400, code: "badRequest")
        expectAPIError(try await server.request("DELETE", path, headers: ["If-Match": made.etag]), 400, code: "badRequest")
        let note = try await server.note(made.id)
        #expect(note.etag == made.etag && (note.object["attachments"] as? [Any])?.isEmpty == true)
        let contents = try FileManager.default.contentsOfDirectory(atPath: served.library.path)
        #expect(!contents.contains("b") && !contents.contains("hidden") && !contents.contains(".hidden"), "\(contents)")
        #expect(served.files(named: ".notes-upload-").isEmpty)
    }

    @Test func aNameWithDotsSpacesAndUnicodeIsAnOrdinaryAttachment() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip")
        let name = "Plan v2.0 100% ünd ….txt"
        let path = "/api/notes/\(made.id)/attachments/\(APIPathEncoding.encode(name))"
        let put = try await served.server.request("PUT", path, headers: ["If-Match": made.etag], body: Data("plan".utf8))
        #expect(put.status == 200, "\(put.text)")
        #expect(Self.attachment(put, name)?["url"] as? String == path)
        #expect(try await served.server.get(path).body == Data("plan".utf8))
    }

    @Test func deletingAnAttachmentNeedsIfMatchThenItIsGone() async throws {
        let served = try await ServedLibrary.start()
        let server = served.server
        let made = try await server.create("Trip")
        let path = "/api/notes/\(made.id)/attachments/a.txt"
        let put = try await server.request("PUT", path, headers: ["If-Match": made.etag], body: Data("aaa".utf8))
        let etag = try #require(put.etag)
        expectAPIError(try await server.request("DELETE", path), 428)
        expectAPIError(try await server.request("DELETE", path, headers: ["If-Match": made.etag]), 412)
        let deleted = try await server.request("DELETE", path, headers: ["If-Match": etag])
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(deleted.etag != nil && deleted.etag != etag && Self.attachment(deleted, "a.txt") == nil)
        expectAPIError(try await server.get(path), 404, code: "noSuchAttachment")
        let again = try await server.request("DELETE", path, headers: ["If-Match": try #require(deleted.etag)])
        expectAPIError(again, 404, code: "noSuchAttachment")
        #expect(!FileManager.default.fileExists(atPath: served.package("trip.note").appendingPathComponent("attachments/a.txt").path))
    }

    @Test func anAttachmentOfAnUnknownNoteOrAnUnknownNameIsA404() async throws {
        let served = try await ServedLibrary.start()
        let made = try await served.server.create("Trip")
        expectAPIError(try await served.server.get("/api/notes/\(made.id)/attachments/none.txt"), 404, code: "noSuchAttachment")
        let unknown = "/api/notes/\(UUID().uuidString)/attachments/a.txt"
        expectAPIError(try await served.server.get(unknown), 404)
        expectAPIError(try await served.server.request("PUT", unknown, headers: ["If-Match": made.etag], body: Data("x".utf8)), 404)
        #expect(served.files(named: ".notes-upload-").isEmpty)
    }
}

/// Percent-encoding of a path segment, as the API's URLs have it.
enum APIPathEncoding {
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
