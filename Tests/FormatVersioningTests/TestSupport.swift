import DocumentKitSystem
import FilePackages
import Foundation
import FormatVersioning

/// The frozen fixtures of `Formats/manifest/v1` and a fictional format they are written in.
enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let manifest = repository.appendingPathComponent("Formats/manifest/v1/fixtures")
    static let notes = repository.appendingPathComponent("Formats/notes/v1/fixtures")

    static func url(_ relativePath: String) -> URL { manifest.appendingPathComponent(relativePath) }

    static func data(_ relativePath: String) throws -> Data { try Data(contentsOf: url(relativePath)) }

    static func manifest(_ relativePath: String) throws -> DocumentManifest {
        try DocumentManifest(jsonData: data(relativePath), path: url(relativePath).path)
    }

    /// The package fixture `name` under `packages/`, read from disk.
    static func package(_ name: String) throws -> (tree: FileWrapper, manifest: DocumentManifest, path: String) {
        let url = url("packages/" + name)
        let tree = try FileWrapper(contentsOf: url)
        let manifest = try DocumentManifest(package: tree, manifestName: "Info.json", packagePath: url.path)
        return (tree, manifest, url.path)
    }

    /// How the package fixture `name` compares with its manifest, checked by a new hasher.
    static func verification(of name: String) throws -> PackageVerification {
        let (tree, manifest, path) = try package(name)
        var hasher = MemberHasher()
        return try hasher.verify(tree, against: manifest, manifestName: "Info.json", packagePath: path)
    }
}

/// `org.documentkit.sketchbook`, the fictional format of the fixtures: version 3 reads and writes
/// files that version 2 may read too; it knows the features `tags` and `layers`.
enum Sketchbook {
    static let identifier = "org.documentkit.sketchbook"
    static let writer = DocumentManifest.Writer(name: "sketchbook", version: "3.0.0")

    static func format(version: Int = 3, migrator: FormatMigrator = migrator()) -> FormatDescription {
        FormatDescription(
            identifier: identifier, version: version, supportedFeatures: ["tags", "layers"],
            knownFields: ["title", "created", "tags"], minimumReaderVersion: 2, migrator: migrator)
    }

    /// The steps versions 2 and 3 shipped.
    static func migrator() -> FormatMigrator {
        var migrator = FormatMigrator()
        migrator.registerMigration("v2-add-tags") { document in
            document.manifest.additionalFields["tags"] = try RawJSONValue(jsonText: "[]")
        }
        migrator.registerMigration("v3-layers-folder") { document in
            document.fileWrapper["layers"] = FileWrapper(directoryWithFileWrappers: [:])
        }
        return migrator
    }
}

/// A regular file with the given text.
func file(_ text: String) -> FileWrapper { FileWrapper(regularFileWithContents: Data(text.utf8)) }

/// A manifest with only what the specification requires, in the sketchbook format.
func sampleManifest(version: Int = 3, minimumReader: Int? = nil, minimumWriter: Int? = nil) -> DocumentManifest {
    DocumentManifest(
        formatIdentifier: Sketchbook.identifier, formatVersion: version, minimumReaderVersion: minimumReader,
        minimumWriterVersion: minimumWriter, writer: Sketchbook.writer, documentIdentifier: "A1B2C3D4-0000-4000-8000-000000000001",
        appliedMigrations: Array(Sketchbook.migrator().migrations.prefix(max(0, version - 1))))
}

/// The text of `data`.
func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }
