import DocumentKit
import Foundation

/// A note: what the user sees and edits, whatever the format version on disk.
struct Note: Sendable {
    var title: String
    /// The body as text (format 3 stores it as blocks: see `NoteBody`).
    var body: String
    var created: Date
    var documentIdentifier: UUID
    /// Attachments by file name. Ones read from disk and left alone are hard-linked on save.
    var attachments: [String: FileWrapper]
    /// Tags, from format 2 on (a format 1 writer keeps those it finds without showing them).
    var tags: [String]
    /// Metadata of attachments by file name, from format 2 on.
    var attachmentInfo: [String: AttachmentInfo]

    init(title: String, body: String, tags: [String] = []) {
        self.title = title
        self.body = body
        self.created = Date()
        self.documentIdentifier = UUID()
        self.attachments = [:]
        self.tags = tags
        self.attachmentInfo = [:]
    }

    /// Appends `text` as a line of its own.
    mutating func appendLine(_ text: String) {
        var line = text
        if line.hasSuffix("\n") { line.removeLast() }
        if !body.isEmpty && !body.hasSuffix("\n") { body += "\n" }
        body += line + "\n"
    }

    /// Adds `tag` unless the note has it.
    mutating func addTag(_ tag: String) {
        if !tags.contains(tag) { tags.append(tag) }
    }
}
