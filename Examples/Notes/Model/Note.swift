import DocumentKit
import Foundation

/// A note: what the user sees and edits.
struct Note: Sendable {
    var title: String
    var body: String
    var created: Date
    var documentIdentifier: UUID
    /// Attachments by file name. Ones read from disk and left alone are hard-linked on save.
    var attachments: [String: FileWrapper]
    /// Manifest fields this version does not know, kept as they were.
    var otherManifestFields: [String: JSONValue]

    init(title: String, body: String) {
        self.title = title
        self.body = body
        self.created = Date()
        self.documentIdentifier = UUID()
        self.attachments = [:]
        self.otherManifestFields = [:]
    }

    /// Appends `text` as a line of its own.
    mutating func appendLine(_ text: String) {
        var line = text
        if line.hasSuffix("\n") { line.removeLast() }
        if !body.isEmpty && !body.hasSuffix("\n") { body += "\n" }
        body += line + "\n"
    }
}
