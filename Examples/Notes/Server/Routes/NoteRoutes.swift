import Foundation
import HTTPTypes
import Hummingbird

extension APIRoutes {
    /// The notes themselves: list, read, create, change, rename, delete.
    func addNoteRoutes(_ api: NotesAPI) {
        add(.get, "/api/notes") { request, _ in
            let query = request.uri.queryParameters
            var limit = 100
            if let text = query.get("limit") {
                guard let value = Int(text), (1...api.limits.maxPageSize).contains(value) else {
                    throw APIError.badRequest("`limit` must be a whole number from 1 to \(api.limits.maxPageSize)")
                }
                limit = value
            }
            var cursor: ListingCursor?
            if let token = query.get("cursor") {
                guard let value = ListingCursor(token: token) else {
                    throw APIError.badRequest("`cursor` is not one this server gave (use the `next` link of the previous page)")
                }
                cursor = value
            }
            let listing = try await api.list(limit: limit, after: cursor)
            var headers: HTTPFields = [:]
            if let next = listing.next {
                let link = "/api/notes?limit=\(limit)&cursor=\(next.token)"
                headers[HTTPField.Name("Link")!] = "<\(link)>; rel=\"next\""
                headers[HTTPField.Name("Next-Cursor")!] = next.token
            }
            return try JSONResponse.make(listing.notes, headers: headers)
        }

        add(.post, "/api/notes") { request, _ in
            let body = try await request.decodeJSON(NewNoteRequest.self, limit: api.limits.maxBodyBytes)
            let (note, tag) = try await api.create(body)
            return try JSONResponse.make(note, status: .created, tag: tag, headers: [.location: note.url])
        }

        add(.get, "/api/notes/{id}") { request, context in
            let id = try request.parameter("id", context)
            let noneMatch = try request.condition(.ifNoneMatch)
            let note = try await api.noteResponse(id)
            if let tag = note.tag, noneMatch?.matchesWeakly(tag) == true { return JSONResponse.notModified(tag) }
            var headers: HTTPFields = [:]
            if note.conflicts > 0 { headers[.conflicts] = "\(note.conflicts)" }
            return JSONResponse.make(json: note.body, tag: note.tag, headers: headers)
        }

        add(.put, "/api/notes/{id}") { request, context in
            let id = try request.parameter("id", context)
            // The precondition is checked before the body is read: a 428 costs no upload.
            guard let condition = try request.condition(.ifMatch) else { throw APIError.preconditionRequired("PUT /api/notes/\(id)") }
            let change = try await request.decodeJSON(NoteChangeRequest.self, limit: api.limits.maxBodyBytes)
            let (note, tag) = try await api.update(id, condition: condition, with: change)
            return try JSONResponse.make(note, tag: tag)
        }

        add(.delete, "/api/notes/{id}") { request, context in
            let id = try request.parameter("id", context)
            guard let condition = try request.condition(.ifMatch) else { throw APIError.preconditionRequired("DELETE /api/notes/\(id)") }
            try await api.delete(id, condition: condition)
            return Response(status: .noContent)
        }

        add(.post, "/api/notes/{id}/rename") { request, context in
            let id = try request.parameter("id", context)
            guard let condition = try request.condition(.ifMatch) else { throw APIError.preconditionRequired("POST /api/notes/\(id)/rename") }
            let body = try await request.decodeJSON(RenameRequest.self, limit: api.limits.maxBodyBytes)
            let (note, tag) = try await api.rename(id, condition: condition, to: body)
            return try JSONResponse.make(note, tag: tag)
        }
    }
}
