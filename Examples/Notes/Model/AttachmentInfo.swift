import Foundation

/// What format 2 records of an attachment, in `attachments.json` (`Formats/notes/v2/SPEC.md`).
struct AttachmentInfo: Codable, Sendable, Equatable {
    /// The media type, such as `image/jpeg`, guessed from the name when it was attached.
    var mediaType: String
    /// When it was attached; nil for attachments older than format 2.
    var added: Date?

    /// The metadata of a file attached now.
    init(attaching name: String, at date: Date = Date()) {
        mediaType = Self.mediaType(of: name)
        added = date
    }

    init(mediaType: String, added: Date?) {
        self.mediaType = mediaType
        self.added = added
    }

    /// The media type a file name suggests, by its extension.
    static func mediaType(of name: String) -> String {
        let types = [
            "txt": "text/plain", "md": "text/markdown", "pdf": "application/pdf", "jpg": "image/jpeg",
            "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "json": "application/json",
            "html": "text/html", "csv": "text/csv",
        ]
        return types[(name as NSString).pathExtension.lowercased()] ?? "application/octet-stream"
    }

    /// `attachments.json`: sorted keys, dates in ISO 8601, a newline at the end.
    static func encode(_ info: [String: AttachmentInfo]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(info) + Data("\n".utf8)
    }

    /// Reads `attachments.json`.
    ///
    /// - Throws: `NoteFormat.Problem` saying what is wrong.
    static func decode(_ data: Data) throws -> [String: AttachmentInfo] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { return try decoder.decode([String: AttachmentInfo].self, from: data) } catch {
            throw NoteFormat.Problem("\(NoteFormat.attachmentInfoName) is malformed: \(DecodingProblem(error))")
        }
    }
}

/// A decoder's error in a few words: what is wrong, and where.
struct DecodingProblem: CustomStringConvertible {
    let description: String

    init(_ error: any Error) {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case DecodingError.typeMismatch(let type, let context):
            description = "expected \(type)\(path(context))"
        case DecodingError.valueNotFound(let type, let context):
            description = "missing \(type)\(path(context))"
        case DecodingError.keyNotFound(let key, let context):
            description = "missing “\(key.stringValue)”\(path(context))"
        case DecodingError.dataCorrupted(let context):
            description = "\(context.debugDescription.prefix(120))\(path(context))"
        default:
            description = "\(error)".prefix(160).description
        }
    }
}
