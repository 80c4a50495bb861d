import DocumentKit
import Foundation
import HTTPTypes
import Hummingbird

extension APIRoutes {
    /// Versions, conflicts and export.
    func addVersionRoutes(_ api: NotesAPI) {
        add(.get, "/api/notes/{id}/versions") { request, context in
            try JSONResponse.make(try await api.versions(of: try request.parameter("id", context)))
        }

        add(.get, "/api/notes/{id}/versions/{version}") { request, context in
            let (id, version) = (try request.parameter("id", context), try request.parameter("version", context))
            let (note, tag) = try await api.version(version, of: id)
            return try JSONResponse.make(note, tag: tag)
        }

        add(.post, "/api/notes/{id}/versions/{version}/restore") { request, context in
            let (id, version) = (try request.parameter("id", context), try request.parameter("version", context))
            guard let condition = try request.condition(.ifMatch) else {
                throw APIError.preconditionRequired("POST /api/notes/\(id)/versions/\(version)/restore")
            }
            let (note, tag) = try await api.restore(version, of: id, condition: condition)
            return try JSONResponse.make(note, tag: tag)
        }

        add(.get, "/api/notes/{id}/conflicts") { request, context in
            try JSONResponse.make(try await api.versions(of: try request.parameter("id", context), conflictsOnly: true))
        }

        add(.post, "/api/notes/{id}/conflicts/resolve") { request, context in
            let id = try request.parameter("id", context)
            guard let condition = try request.condition(.ifMatch) else {
                throw APIError.preconditionRequired("POST /api/notes/\(id)/conflicts/resolve")
            }
            let body = try await request.decodeJSON(ResolveRequest.self, limit: api.limits.maxBodyBytes)
            let (note, tag) = try await api.resolve(id, condition: condition, body)
            return try JSONResponse.make(note, tag: tag)
        }

        add(.get, "/api/notes/{id}/export") { request, context in
            try await Self.export(try request.parameter("id", context), request, api)
        }

        add(.get, "/api/export") { request, _ in
            try await Self.export(nil, request, api)
        }
    }

    /// An archive of one note or of all, streamed from a temporary file removed afterwards.
    private static func export(_ id: String?, _ request: Request, _ api: NotesAPI) async throws -> Response {
        let name = request.uri.queryParameters.get("format").map { String($0) } ?? "zip"
        guard let format = ArchiveFormat(rawValue: name), format.isAvailable else {
            let formats = ArchiveFormat.available.map(\.rawValue).joined(separator: ", ")
            throw APIError.badRequest("`format` must be one of \(formats)")
        }
        let archive = try await api.export(id, format: format)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        let descriptor = open(archive.path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw APIError(.internalServerError, "ioError", "the archive could not be read back")
        }
        // Open: the file may go (the descriptor keeps it).
        let file = OpenAttachment(
            descriptor: descriptor, size: Int64(info.st_size), tag: EntityTag(digest: ""), mediaType: format.mediaType)
        let headers: HTTPFields = [
            .contentType: format.mediaType, .contentLength: "\(info.st_size)",
            .contentDisposition: "attachment; filename=\"\(id.map { "note-\($0)" } ?? "notes").\(format.fileExtension)\"",
            .cacheControl: "no-store",
        ]
        return Response(status: .ok, headers: headers, body: stream(file))
    }
}

extension ArchiveFormat {
    /// The media type of an archive of this format.
    var mediaType: String {
        switch self {
        case .zip: return "application/zip"
        case .tarGzip: return "application/gzip"
        default: return "application/octet-stream"
        }
    }
}
