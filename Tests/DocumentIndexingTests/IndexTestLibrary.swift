@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation

/// A library folder of note-like packages for the index tests: `NAME.note/Info.json` (format
/// `org.documentkit.test.note`, version 1, fields `title` and `tags`) and a member `body.txt`.
final class IndexTestLibrary: Sendable {
    static let format = "org.documentkit.test.note"
    let directory: TemporaryDirectory
    let cache: TemporaryDirectory
    var url: URL { directory.url }

    init() throws {
        directory = try TemporaryDirectory(prefix: "index-library")
        cache = try TemporaryDirectory(prefix: "index-cache")
    }

    /// The configuration of an index of this library, its cache in a folder of the test's own.
    func configuration(
        fileSystem: FileSystem = .live, readerVersion: Int? = 1, persistent: Bool = true
    ) -> DocumentIndex.Configuration {
        DocumentIndex.Configuration(
            folderURL: url, packageExtensions: ["note"], manifestName: "Info.json", formatIdentifier: Self.format,
            readerVersion: readerVersion, keyField: "title", fields: ["title", "tags"], cacheFolder: cache.url,
            isPersistent: persistent, fileSystem: fileSystem)
    }

    /// Writes a package at `path` (relative) with a valid manifest; returns its identifier.
    @discardableResult
    func writeNote(
        _ path: String, title: String, body: String = "text", identifier: String = UUID().uuidString,
        format: String = IndexTestLibrary.format, version: Int = 1, minimumReaderVersion: Int? = nil
    ) throws -> String {
        let package = url.appendingPathComponent(path, isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let bodyData = Data(body.utf8)
        try bodyData.write(to: package.appendingPathComponent("body.txt"))
        let manifest = DocumentManifest(
            formatIdentifier: format, formatVersion: version, minimumReaderVersion: minimumReaderVersion,
            writer: .init(name: "tests", version: "1"), documentIdentifier: identifier,
            members: ["body.txt": MemberRecord(size: Int64(bodyData.count), sha256: String(repeating: "0", count: 64))],
            additionalFields: ["title": RawJSONValue(string: title), "tags": try RawJSONValue(jsonText: "[\"a\"]")])
        try manifest.jsonData().write(to: package.appendingPathComponent("Info.json"))
        return identifier
    }

    /// The path of `relative` in the library.
    func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }
}

/// The entries by relative path, without what a fresh scan can't know the same (nothing, today).
func summary(_ entries: [IndexEntry]) -> [String: IndexEntry] {
    Dictionary(uniqueKeysWithValues: entries.map { ($0.relativePath, $0) })
}
