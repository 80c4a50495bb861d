#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HTTPTypes
import Hummingbird

extension APIRoutes {
    /// Attachments, streamed both ways: never whole in memory.
    func addAttachmentRoutes(_ api: NotesAPI) {
        add(.get, "/api/notes/{id}/attachments/{name}") { request, context in
            let (id, name) = (try request.parameter("id", context), try request.parameter("name", context))
            let noneMatch = try request.condition(.ifNoneMatch)
            let attachment = try await api.openAttachment(name, of: id)
            if noneMatch?.matchesWeakly(attachment.tag) == true {
                close(attachment.descriptor)
                return JSONResponse.notModified(attachment.tag)
            }
            let headers: HTTPFields = [
                .contentType: attachment.mediaType, .eTag: attachment.tag.description, .cacheControl: "no-cache, no-transform",
                .contentLength: "\(attachment.size)",
            ]
            return Response(status: .ok, headers: headers, body: Self.stream(attachment))
        }

        add(.put, "/api/notes/{id}/attachments/{name}") { request, context in
            let (id, name) = (try request.parameter("id", context), try request.parameter("name", context))
            guard let condition = try request.condition(.ifMatch) else {
                throw APIError.preconditionRequired("PUT /api/notes/\(id)/attachments/\(name)")
            }
            try NotesAPI.checkAttachmentName(name)
            let limit = api.limits.maxAttachmentBytes
            if let length = request.headers[.contentLength].flatMap(Int64.init), length > limit {
                throw APIError(.contentTooLarge, "bodyTooLarge", "the attachment has \(length) bytes; this server takes at most \(limit) (--max-attachment-bytes)")
            }
            let (upload, descriptor) = try api.makeUploadFile()
            defer { unlink(upload.path) }
            do {
                try await Self.receive(request.body, into: descriptor, limit: limit)
                close(descriptor)
            } catch {
                close(descriptor)
                throw error
            }
            let (note, tag) = try await api.putAttachment(name, of: id, condition: condition, from: upload)
            return try JSONResponse.make(note, tag: tag)
        }

        add(.delete, "/api/notes/{id}/attachments/{name}") { request, context in
            let (id, name) = (try request.parameter("id", context), try request.parameter("name", context))
            guard let condition = try request.condition(.ifMatch) else {
                throw APIError.preconditionRequired("DELETE /api/notes/\(id)/attachments/\(name)")
            }
            let (note, tag) = try await api.deleteAttachment(name, of: id, condition: condition)
            return try JSONResponse.make(note, tag: tag)
        }
    }

    /// The file behind `attachment`, sent in pieces of 64 KiB; the descriptor is closed at the end.
    static func stream(_ attachment: OpenAttachment) -> ResponseBody {
        ResponseBody(contentLength: Int(attachment.size)) { writer in
            defer { close(attachment.descriptor) }
            var offset: Int64 = 0
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            while offset < attachment.size {
                let count = chunk.withUnsafeMutableBytes { pread(attachment.descriptor, $0.baseAddress, $0.count, off_t(offset)) }
                guard count > 0 else { throw APIError(.internalServerError, "ioError", "the attachment could not be read to its end") }
                try await writer.write(ByteBuffer(bytes: chunk[0..<count]))
                offset += Int64(count)
            }
            try await writer.finish(nil)
        }
    }

    /// Writes the request body into `descriptor`, synced: 413 beyond `limit` bytes, 507 when the disk is full.
    static func receive(_ body: RequestBody, into descriptor: Int32, limit: Int) async throws {
        var total = 0
        for try await buffer in body {
            total += buffer.readableBytes
            guard total <= limit else {
                throw APIError(.contentTooLarge, "bodyTooLarge", "the attachment is larger than \(limit) bytes (--max-attachment-bytes)")
            }
            let bytes = Array(buffer.readableBytesView)
            try await BlockingWork.run {
                var done = 0
                while done < bytes.count {
                    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, bytes.count - done) }
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw Self.writeError(errno)
                    }
                    done += written
                }
            }
        }
        try await BlockingWork.run {
            guard fsync(descriptor) == 0 else { throw Self.writeError(errno) }
        }
    }

    private static func writeError(_ code: Int32) -> APIError {
        if code == ENOSPC || code == EDQUOT {
            return APIError(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "noSpace", "the library's disk is full: the upload was not stored")
        }
        return APIError(.internalServerError, "ioError", "the upload could not be stored: \(String(cString: strerror(code)))")
    }
}
