import Foundation
import HTTPTypes
import Hummingbird

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let accelBuffering = HTTPField.Name("X-Accel-Buffering")!
    static let conflicts = HTTPField.Name("Conflicts")!
}

extension Request {
    /// The `If-Match` (or `If-None-Match`) condition of the request; nil without one; 400 for a
    /// value that isn't `*` or a list of quoted tags.
    func condition(_ name: HTTPField.Name) throws -> EntityTag.Condition? {
        let values = headers[values: name]
        guard !values.isEmpty else { return nil }
        guard let condition = EntityTag.parseCondition(values.joined(separator: ", ")) else {
            throw APIError.badRequest("\(name) must be * or a list of quoted entity tags such as \"3f2a…\" (as ETag gives them)")
        }
        return condition
    }

    /// The JSON body decoded as `T`: 415 unless it is `application/json`, 413 beyond `limit`
    /// bytes, 400 naming the field for JSON that doesn't fit.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        let mediaType = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" else {
            throw APIError(.unsupportedMediaType, "unsupportedMediaType", "the body must be JSON, sent with Content-Type: application/json")
        }
        if let length = headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError(.contentTooLarge, "bodyTooLarge", "the body has \(length) bytes; this server takes at most \(limit) (--max-body-bytes)")
        }
        var buffer: ByteBuffer
        do { buffer = try await body.collect(upTo: limit) } catch {
            throw APIError(.contentTooLarge, "bodyTooLarge", "the body is larger than \(limit) bytes (--max-body-bytes)")
        }
        let data = Data(buffer.readableBytesView)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw APIError.badRequest("the body must be a JSON object")
        }
        return try JSONCoding.decoder.decode(T.self, from: data)
    }

    /// The path parameter `name` (decoded); 400 if missing, or not valid percent-encoded UTF-8
    /// (taken as it is, `%ZZ` would be a second name for the attachment `%25ZZ` names).
    func parameter(_ name: String, _ context: some RequestContext) throws -> String {
        guard let value = context.parameters.get(name) else { throw APIError.badRequest("missing \(name) in the path") }
        guard let decoded = value.removingPercentEncoding else {
            throw APIError.badRequest("the \(name) in the path is not valid percent-encoded UTF-8 (a `%` is sent as %25)")
        }
        return decoded
    }
}

/// JSON responses with the headers every API response has.
enum JSONResponse {
    static func make(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, tag: EntityTag? = nil, headers extra: HTTPFields = [:]
    ) throws -> Response {
        make(json: try JSONCoding.encoder.encode(value), status: status, tag: tag, headers: extra)
    }

    /// A response of JSON already encoded.
    static func make(json data: Data, status: HTTPResponse.Status = .ok, tag: EntityTag? = nil, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = "application/json; charset=utf-8"
        // A proxy must not recompress the body and weaken the strong tag.
        headers[.cacheControl] = "no-cache, no-transform"
        if let tag { headers[.eTag] = tag.description }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// 304 for a GET whose `If-None-Match` names the current tag.
    static func notModified(_ tag: EntityTag) -> Response {
        Response(status: .notModified, headers: [.eTag: tag.description, .cacheControl: "no-cache, no-transform"])
    }
}
