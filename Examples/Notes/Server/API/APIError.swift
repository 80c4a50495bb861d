import DocumentKit
import Foundation
import HTTPTypes
import Hummingbird

/// An error of the notes API: a status and a JSON body naming what is wrong,
/// `{"error": {"status": 412, "code": "preconditionFailed", "message": "…", "etag": "\"…\""}}`.
/// Every error the server answers with is one of these (`APIErrorMiddleware`): input never gets a 500.
struct APIError: Error, HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    /// A stable, machine-readable name (`noSuchNote`, `preconditionFailed`, …).
    let code: String
    let message: String
    /// The note's current entity tag, on 412 (and 409 where it helps).
    var currentTag: EntityTag?
    /// Extra response headers (`Allow` on 405, `Retry-After` on 503).
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, currentTag: EntityTag? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.currentTag = currentTag
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            let status: Int
            let code: String
            let message: String
            let etag: String?
        }
        let error: Detail
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let currentTag { headers[.eTag] = currentTag.description }
        let body = Body(error: .init(status: status.code, code: code, message: message, etag: currentTag?.description))
        let data = try JSONCoding.encoder.encode(body)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension APIError {
    static func noSuchNote(_ id: String) -> APIError {
        APIError(.notFound, "noSuchNote", "no note with id \(id) in this library (GET /api/notes lists them)")
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "badRequest", message) }

    /// 428: an unsafe request without `If-Match`.
    static func preconditionRequired(_ what: String) -> APIError {
        APIError(
            .preconditionRequired, "preconditionRequired",
            "\(what) needs an If-Match header with the note's current ETag (from GET), so that it can't overwrite a change it hasn't seen; GET the note and send its ETag")
    }

    /// 412: `If-Match` names a state that isn't the current one.
    static func stale(_ current: EntityTag?, id: String) -> APIError {
        APIError(
            .preconditionFailed, "preconditionFailed",
            "note \(id) changed since the ETag sent in If-Match: the current ETag is in this response; GET the note, merge, and send again",
            currentTag: current)
    }

    /// The API's error for a `notes` model error: its status as HTTP.
    init(_ error: NotesError) {
        let code = error.code ?? String(describing: error.status)
        switch error.status {
        case .usage: self.init(.badRequest, code, error.message)
        case .noSuchNote: self.init(.notFound, code, error.message)
        case .cantCreate: self.init(.conflict, code, error.message)
        case .badData, .readOnly:
            // A damaged note, one too new for this version, a read-only library: the state of
            // the library, not the request, is in the way.
            self.init(.conflict, code, error.message)
        case .busy:
            self.init(.serviceUnavailable, code, error.message)
            headers[.retryAfter] = "1"
        case .ioError:
            if error.message.contains("No space left") {
                self.init(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), code, error.message)
            } else {
                self.init(.internalServerError, code, error.message)
            }
        }
    }

    /// The API's error for any error a handler throws.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as NotesError: return APIError(error)
        case let error as DocumentKitError: return APIError(NotesError(error, note: ""))
        case let error as DecodingError: return .badRequest("the body is not the JSON this request takes: \(JSONCoding.describe(error))")
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge:
                return APIError(.contentTooLarge, "bodyTooLarge", error.body ?? "the body is larger than this server accepts")
            case .notFound: return APIError(.notFound, "notFound", error.body ?? "no such resource")
            default: return APIError(error.status, "http\(error.status.code)", error.body ?? error.status.reasonPhrase)
            }
        default:
            if String(describing: type(of: error)).contains("TooManyBytes") {
                return APIError(.contentTooLarge, "bodyTooLarge", "the body is larger than this server accepts")
            }
            return APIError(.internalServerError, "internal", "\(error)")
        }
    }
}

/// Turns every error a handler throws into an ``APIError`` JSON response.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try APIError.from(error).response(from: request, context: context)
        }
    }
}

/// The JSON coders of the API: sorted keys, ISO 8601 dates as `notes` prints them.
enum JSONCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(NoteCoding.text(of: date))
        }
        return encoder
    }()

    static let decoder = JSONDecoder()

    /// A decoding error in a sentence: which field, and what is wrong with it.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let names = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "the body" : "`\(names.joined(separator: "."))`"
        }
        switch error {
        case .typeMismatch(let type, let context): return "\(path(context)) must be \(typeName(type))"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(typeName(type)), not null"
        case .keyNotFound(let key, _): return "`\(key.stringValue)` is missing"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not valid JSON" : "\(path(context)) is not valid: \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is [String].Type: return "an array of strings"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default: return "an object"
        }
    }
}
