import DocumentKit
import Foundation

/// Turns a note package (tree and manifest, already checked and migrated by `Document`) into a
/// `Note` and back, as format `version` defines it (`Formats/notes/vN/SPEC.md`).
///
/// What this version doesn't define is left alone: manifest fields and members of newer
/// versions stay in the manifest and the tree, which the save writes back.
struct NoteCoding {
    let version: Int

    func decode(_ tree: FileWrapper, manifest: DocumentManifest) throws -> Note {
        let fields = manifest.additionalFields
        guard let title = fields["title"]?.stringValue, !title.isEmpty else {
            throw NoteFormat.Problem("\(NoteFormat.manifestName) has no title (a non-empty string)")
        }
        guard let identifier = UUID(uuidString: manifest.documentIdentifier) else {
            throw NoteFormat.Problem("\(NoteFormat.manifestName)'s documentIdentifier is not a UUID")
        }
        var note = Note(title: title, body: try body(in: tree))
        note.documentIdentifier = identifier
        if let created = fields["created"]?.stringValue.flatMap(Self.date(from:)) { note.created = created }
        note.attachments = tree[NoteFormat.attachmentsName]?.fileWrappers ?? [:]
        if version >= 2 {
            if let tags = fields["tags"] {
                guard let list = try? tags.decode([String].self) else {
                    throw NoteFormat.Problem("\(NoteFormat.manifestName)'s “tags” must be an array of strings")
                }
                note.tags = list
            }
            if let member = tree[NoteFormat.attachmentInfoName] {
                note.attachmentInfo = try AttachmentInfo.decode(try contents(of: member, NoteFormat.attachmentInfoName))
            }
        }
        return note
    }

    private func body(in tree: FileWrapper) throws -> String {
        let name = NoteFormat.bodyMember(for: version)
        guard let member = tree[name] else { throw NoteFormat.Problem("the body \(name) is missing") }
        let data = try contents(of: member, name)
        if version >= 3 { return try NoteBody(jsonData: data).text }
        guard let text = String(validating: data, as: UTF8.self) else { throw NoteFormat.Problem("\(name) is not UTF-8 text") }
        return text
    }

    private func contents(of member: FileWrapper, _ name: String) throws -> Data {
        guard member.isRegularFile else { throw NoteFormat.Problem("\(name) is a \(member.kind), not a file") }
        return try member.regularFileContents
    }

    /// Sets the fields and members this version defines, leaving the rest as it was. Members
    /// whose bytes would not change keep their file (the save links it).
    func encode(_ note: Note, manifest: inout DocumentManifest, replacing previous: FileWrapper?) throws -> FileWrapper {
        var tree = previous.flatMap { $0.isDirectory ? $0 : nil } ?? FileWrapper(directoryWithFileWrappers: [:])
        set("title", RawJSONValue(string: note.title), in: &manifest)
        set("created", RawJSONValue(string: Self.text(of: note.created)), in: &manifest)
        manifest.documentIdentifier = note.documentIdentifier.uuidString
        if version >= 3 {
            let unchanged = (try? tree[NoteFormat.blocksName].map { try NoteBody(jsonData: try $0.regularFileContents).text }) == note.body
            if !unchanged { tree[NoteFormat.blocksName] = FileWrapper(regularFileWithContents: try NoteBody(text: note.body).jsonData()) }
        } else {
            replace(NoteFormat.bodyName, with: Data(note.body.utf8), in: &tree)
        }
        tree[NoteFormat.attachmentsName] =
            note.attachments.isEmpty ? nil : FileWrapper(directoryWithFileWrappers: note.attachments)
        if version >= 2 {
            if (try? manifest.additionalFields["tags"]?.decode([String].self)) != note.tags {
                manifest.additionalFields["tags"] = try RawJSONValue(encoding: note.tags)
            }
            let info = note.attachmentInfo.filter { note.attachments[$0.key] != nil }
            if info.isEmpty {
                tree[NoteFormat.attachmentInfoName] = nil
            } else if (try? tree[NoteFormat.attachmentInfoName].map { try AttachmentInfo.decode(try $0.regularFileContents) }) != info {
                tree[NoteFormat.attachmentInfoName] = FileWrapper(regularFileWithContents: try AttachmentInfo.encode(info))
            }
        }
        return tree
    }

    /// Sets a manifest field unless it holds that value already (its text then stays as it was).
    private func set(_ key: String, _ value: RawJSONValue, in manifest: inout DocumentManifest) {
        if manifest.additionalFields[key]?.stringValue != value.stringValue { manifest.additionalFields[key] = value }
    }

    private func replace(_ name: String, with data: Data, in tree: inout FileWrapper) {
        if tree[name].map({ (try? $0.regularFileContents) != data }) ?? true {
            tree[name] = FileWrapper(regularFileWithContents: data)
        }
    }

    /// `2026-11-22T10:15:00Z`: a format style, a value made once (an `ISO8601DateFormatter`
    /// per date cost more than the rest of reading a note).
    static let dateStyle = Date.ISO8601FormatStyle()
    static func date(from text: String) -> Date? { try? Date(text, strategy: dateStyle) }
    static func text(of date: Date) -> String { date.formatted(dateStyle) }
}
