import DocumentKit
import Foundation

/// The notes package format, version 1 (see Formats/notes/v1/SPEC.md):
/// `Info.json` (the manifest), `body.md`, `attachments/`.
enum NoteFormat {
    static let identifier = "org.documentkit.notes"
    static let version = 1
    static let manifestName = "Info.json"
    static let bodyName = "body.md"
    static let attachmentsName = "attachments"
    static let packageExtension = "note"
    static let appVersion = "0.1.0"

    /// Why a package is not a readable note.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func decode(_ tree: FileWrapper) throws -> Note {
        guard tree.isDirectory else { throw Problem(description: "a note must be a package (a folder), this is a file") }
        guard let manifestWrapper = tree[manifestName] else { throw Problem(description: "the manifest \(manifestName) is missing") }
        let manifestData = try manifestWrapper.regularFileContents
        guard manifestData.count <= 1 << 20 else { throw Problem(description: "\(manifestName) is larger than 1 MiB") }
        let object: [String: JSONValue]
        do { object = try JSONDecoder().decode([String: JSONValue].self, from: manifestData) } catch {
            throw Problem(description: "\(manifestName) is not a JSON object")
        }
        guard object["format"]?.stringValue == identifier else {
            throw Problem(description: "\(manifestName) does not say format \"\(identifier)\"")
        }
        guard let version = object["formatVersion"]?.numberValue, version == version.rounded(), version >= 1 else {
            throw Problem(description: "\(manifestName) has no valid formatVersion")
        }
        guard Int(version) <= Self.version else {
            throw Problem(description: "written by a newer version: format \(Int(version)), this app reads up to \(Self.version)")
        }
        guard let title = object["title"]?.stringValue, !title.isEmpty else {
            throw Problem(description: "\(manifestName) has no title")
        }
        guard let idText = object["documentIdentifier"]?.stringValue, let id = UUID(uuidString: idText) else {
            throw Problem(description: "\(manifestName) has no valid documentIdentifier")
        }
        guard let bodyWrapper = tree[bodyName], bodyWrapper.isRegularFile else {
            throw Problem(description: "the body \(bodyName) is missing")
        }
        let bodyData = try bodyWrapper.regularFileContents
        guard let body = String(data: bodyData, encoding: .utf8) else {
            throw Problem(description: "\(bodyName) is not UTF-8 text")
        }
        var note = Note(title: title, body: body)
        note.documentIdentifier = id
        if let created = object["created"]?.stringValue, let date = ISO8601DateFormatter().date(from: created) {
            note.created = date
        }
        note.attachments = tree[attachmentsName]?.fileWrappers ?? [:]
        let known: Set = ["format", "formatVersion", "title", "documentIdentifier", "created", "writer"]
        note.otherManifestFields = object.filter { !known.contains($0.key) }
        return note
    }

    static func encode(_ note: Note, replacing previous: FileWrapper?) throws -> FileWrapper {
        var tree = previous.flatMap { $0.isDirectory ? $0 : nil } ?? FileWrapper(directoryWithFileWrappers: [:])
        var object = note.otherManifestFields
        object["format"] = .string(identifier)
        object["formatVersion"] = .number(Double(version))
        object["title"] = .string(note.title)
        object["documentIdentifier"] = .string(note.documentIdentifier.uuidString)
        object["created"] = .string(ISO8601DateFormatter().string(from: note.created))
        object["writer"] = .object(["name": .string("notes"), "version": .string(appVersion)])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var manifest = try encoder.encode(object)
        manifest.append(0x0A)
        if tree[manifestName].map({ (try? $0.regularFileContents) != manifest }) ?? true {
            tree[manifestName] = FileWrapper(regularFileWithContents: manifest)
        }
        let body = Data(note.body.utf8)
        if tree[bodyName].map({ (try? $0.regularFileContents) != body }) ?? true {
            tree[bodyName] = FileWrapper(regularFileWithContents: body)
        }
        tree[attachmentsName] = note.attachments.isEmpty ? nil : FileWrapper(directoryWithFileWrappers: note.attachments)
        return tree
    }
}

/// A note on disk.
final class NoteDocument: Document<Note>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> Note {
        try NoteFormat.decode(fileWrapper)
    }

    override func fileWrapper(for note: Note, replacing previous: FileWrapper?) throws -> FileWrapper {
        try NoteFormat.encode(note, replacing: previous)
    }
}
