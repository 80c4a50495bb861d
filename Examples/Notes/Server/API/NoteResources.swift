import DocumentKit
import Foundation

/// A note in a listing (`GET /api/notes`).
struct NoteListItem: Encodable, Sendable {
    let id: String
    let title: String
    /// The note's resource: `/api/notes/{id}`.
    let url: String
    /// The note's current `ETag` (quoted), as `GET /api/notes/{id}` sends it.
    let etag: String
    let tags: [String]
    let modified: Date
    /// How many unresolved conflict versions it has.
    let conflicts: Int
}

/// A note (`GET /api/notes/{id}`): its body, metadata and attachments.
struct NoteResource: Encodable, Sendable {
    let id: String
    let title: String
    let url: String
    let etag: String
    let tags: [String]
    let modified: Date
    let created: Date
    let body: String
    /// The format version of the note on disk.
    let formatVersion: Int
    /// Whether this server may only read the note (a newer format's rule).
    let readOnly: Bool
    let attachments: [AttachmentResource]
    let conflicts: Int
}

/// An attachment of a note.
struct AttachmentResource: Encodable, Sendable {
    let name: String
    /// `/api/notes/{id}/attachments/{name}` (the name percent-encoded).
    let url: String
    let size: Int64
    let mediaType: String
    /// The SHA-256 of its bytes, quoted: the attachment's `ETag`.
    let etag: String
    let added: Date?
}

/// A version of a note (`GET /api/notes/{id}/versions`).
struct VersionResource: Encodable, Sendable {
    let id: String
    let url: String
    /// The `ETag` the note had in this state; nil when unknown.
    let etag: String?
    let date: Date?
    let host: String?
    let user: String?
    let origin: String
    let conflict: Bool
    let resolved: Bool
}

/// The body of `POST /api/notes`.
struct NewNoteRequest: Decodable, Sendable {
    let title: String
    let body: String?
    let tags: [String]?
}

/// The body of `PUT /api/notes/{id}`: what is given replaces what the note has; what is left out stays.
struct NoteChangeRequest: Decodable, Sendable {
    let body: String?
    let tags: [String]?

    /// Whether the note already is what this request asks for (a retried write whose response was lost).
    func isApplied(to note: Note) -> Bool {
        (body == nil || body == note.body) && (tags == nil || tags == note.tags)
    }

    func apply(to note: inout Note) {
        if let body { note.body = body }
        if let tags { note.tags = tags }
    }
}

/// The body of `POST /api/notes/{id}/rename`.
struct RenameRequest: Decodable, Sendable {
    let title: String
}

/// The body of `POST /api/notes/{id}/conflicts/resolve`: `{"keep": "current"}`, `{"keep": VERSION}`
/// or `{"merge": true}`.
struct ResolveRequest: Decodable, Sendable {
    let keep: String?
    let merge: Bool?
}

/// Paths of the API's resources.
enum APIPath {
    static func note(_ id: String) -> String { "/api/notes/\(id)" }
    static func attachment(_ name: String, of id: String) -> String { "/api/notes/\(id)/attachments/\(percentEncoded(name))" }
    static func version(_ version: String, of id: String) -> String { "/api/notes/\(id)/versions/\(percentEncoded(version))" }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
