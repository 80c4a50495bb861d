import DocumentKit
import Foundation

/// The content of ``VersionedTextDocument``.
struct VersionedText: Sendable, Equatable {
    var title: String
    var text: String
    /// Known from version 2 on.
    var tags: [String] = []
}

/// A package document in the format `org.documentkit.test.text`, for the tests of formats:
/// - version 1: the manifest field `title`, the member `text.txt`;
/// - version 2 adds the field `tags` (step “2-tags”); version 1 may still read and change it;
/// - version 3 moves the text to `text.md` (step “3-text-md”); older versions can't read it.
///
/// `readerVersion` makes it the reader and writer of that version.
class VersionedTextDocument: Document<VersionedText>, @unchecked Sendable {
    static let identifier = "org.documentkit.test.text"
    let readerVersion: Int

    required init(fileURL: URL, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil) {
        readerVersion = 2
        super.init(fileURL: fileURL, saveOptions: saveOptions, coordinator: coordinator)
    }

    /// A document not read yet, as the reader of `readerVersion`: call `open()`.
    init(fileURL: URL, readerVersion: Int, saveOptions: SaveOptions = SaveOptions()) {
        self.readerVersion = readerVersion
        super.init(fileURL: fileURL, saveOptions: saveOptions)
    }

    /// A new document, as the writer of `readerVersion`.
    init(fileURL: URL, content: VersionedText, readerVersion: Int) {
        self.readerVersion = readerVersion
        super.init(fileURL: fileURL, content: content)
    }

    override var format: FormatDescription? { Self.format(version: readerVersion) }

    override var writer: DocumentManifest.Writer { DocumentManifest.Writer(name: "texts", version: "\(readerVersion).0") }

    static func format(version: Int) -> FormatDescription {
        var migrator = FormatMigrator()
        if version >= 2 {
            migrator.registerMigration("2-tags") { document in
                document.manifest.additionalFields["tags"] = try RawJSONValue(jsonText: "[]")
            }
        }
        if version >= 3 {
            migrator.registerMigration("3-text-md") { document in
                guard let text = document.fileWrapper["text.txt"] else { throw MissingMember(name: "text.txt") }
                document.fileWrapper["text.md"] = text
                document.fileWrapper["text.txt"] = nil
            }
        }
        let minimums = [1: (1, 1), 2: (1, 1), 3: (3, 3)][version] ?? (version, version)
        return FormatDescription(
            identifier: identifier, version: version, knownFields: version >= 2 ? ["title", "tags"] : ["title"],
            minimumReaderVersion: minimums.0, minimumWriterVersion: minimums.1, migrator: migrator)
    }

    private var textName: String { readerVersion >= 3 ? "text.md" : "text.txt" }

    override func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> VersionedText {
        guard let title = manifest.additionalFields["title"]?.stringValue else { throw MissingMember(name: "title") }
        guard let member = fileWrapper[textName] else { throw MissingMember(name: textName) }
        var content = VersionedText(title: title, text: String(decoding: try member.regularFileContents, as: UTF8.self))
        if readerVersion >= 2 { content.tags = try manifest.additionalFields["tags"]?.decode([String].self) ?? [] }
        return content
    }

    override func fileWrapper(
        for content: VersionedText, manifest: inout DocumentManifest, replacing previous: FileWrapper?
    ) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        let data = Data(content.text.utf8)
        if (try? tree[textName]?.regularFileContents) != data { tree[textName] = FileWrapper(regularFileWithContents: data) }
        manifest.additionalFields["title"] = RawJSONValue(string: content.title)
        if readerVersion >= 2 { manifest.additionalFields["tags"] = try RawJSONValue(encoding: content.tags) }
        return tree
    }

    /// A test merge: the lines of the ancestor that both sides kept, then each side's new lines
    /// (current first); "no ancestor" appended when there was none.
    override func merge(_ current: VersionedText, with other: VersionedText, ancestor: VersionedText?) throws -> VersionedText {
        let base = ancestor.map { Set($0.text.split(separator: "\n")) } ?? []
        var lines = current.text.split(separator: "\n").map(String.init)
        for line in other.text.split(separator: "\n") where !base.contains(line) && !lines.contains(String(line)) {
            lines.append(String(line))
        }
        if ancestor == nil { lines.append("no ancestor") }
        var merged = current
        merged.text = lines.joined(separator: "\n")
        return merged
    }
}

/// Writes a package by hand: `members` as files (at most one folder deep), and the manifest `Info.json` made by
/// `manifest` from the JSON text of the members' records (`"text.txt" : {"sha256" : …, "size" : …}`).
func writePackage(at url: URL, members: [String: String], manifest: (_ recordsJSON: String) -> String) throws {
    var top: [String: FileWrapper] = [:]
    var folders: [String: [String: FileWrapper]] = [:]
    for (path, text) in members {
        let file = FileWrapper(regularFileWithContents: Data(text.utf8))
        if let slash = path.firstIndex(of: "/") {
            folders[String(path[..<slash]), default: [:]][String(path[path.index(after: slash)...])] = file
        } else {
            top[path] = file
        }
    }
    for (name, children) in folders { top[name] = FileWrapper(directoryWithFileWrappers: children) }
    var tree = FileWrapper(directoryWithFileWrappers: top)
    var hasher = MemberHasher()
    let records = try hasher.memberRecords(of: tree, manifestName: "Info.json", packagePath: url.path)
    let recordsJSON = records.keys.sorted().map { path in
        "\"\(path)\" : {\"sha256\" : \"\(records[path]!.sha256)\", \"size\" : \(records[path]!.size)}"
    }.joined(separator: ", ")
    tree["Info.json"] = FileWrapper(regularFileWithContents: Data(manifest("{" + recordsJSON + "}").utf8))
    _ = try tree.write(to: url, options: SaveOptions(durability: .consistent))  // tests need no flush
}

/// Every regular file of the package at `url`, by relative path, with its bytes.
func packageContents(_ url: URL) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
    while let item = enumerator?.nextObject() as? URL {
        guard try item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
        let relative = String(item.standardizedFileURL.path.dropFirst(url.standardizedFileURL.path.count + 1))
        contents[relative] = try Data(contentsOf: item)
    }
    return contents
}
