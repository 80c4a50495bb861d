import DocumentKitSystem
import Foundation

/// What an app knows of its document format: the format's identifier, the version it reads and
/// writes, the features and fields it understands, and its migrations.
///
/// ```swift
/// var migrator = FormatMigrator()
/// migrator.registerMigration("v2-add-tags") { document in … }
/// let format = FormatDescription(
///     identifier: "org.documentkit.notes", version: 2, supportedFeatures: ["tags"],
///     knownFields: ["title", "created", "tags"], minimumReaderVersion: 1, migrator: migrator)
/// switch format.compatibility(of: manifest, at: url.path) { … }
/// ```
public struct FormatDescription: Sendable {
    /// The format's reverse-DNS identifier, such as `org.documentkit.notes`.
    public var identifier: String
    /// The format version this app reads and writes (R in the specification).
    public var version: Int
    /// The features this app understands, required or optional.
    public var supportedFeatures: Set<String>
    /// The format's own top-level manifest fields this app understands (such as `title`); other
    /// fields are reported as unrecognized.
    public var knownFields: Set<String>
    /// The oldest reader version that may read what this app writes.
    public var minimumReaderVersion: Int
    /// The oldest writer version that may change what this app writes.
    public var minimumWriterVersion: Int
    /// The format's migration steps.
    public var migrator: FormatMigrator
    /// The name of the manifest member of a package (`Info.json` unless the format says otherwise).
    public var manifestName: String

    /// Describes a format. The minimum versions default to `version`: only this version and
    /// later may read and change what this app writes.
    public init(
        identifier: String, version: Int, supportedFeatures: Set<String> = [], knownFields: Set<String> = [],
        minimumReaderVersion: Int? = nil, minimumWriterVersion: Int? = nil, migrator: FormatMigrator = FormatMigrator(),
        manifestName: String = "Info.json"
    ) {
        self.identifier = identifier
        self.version = version
        self.supportedFeatures = supportedFeatures
        self.knownFields = knownFields
        self.minimumReaderVersion = minimumReaderVersion ?? version
        self.minimumWriterVersion = minimumWriterVersion ?? version
        self.migrator = migrator
        self.manifestName = manifestName
    }

    /// The manifest of a new document in this format: this version, every registered migration
    /// counted as applied (a new document needs none).
    public func makeManifest(
        writer: DocumentManifest.Writer, documentIdentifier: String = UUID().uuidString
    ) -> DocumentManifest {
        DocumentManifest(
            formatIdentifier: identifier, formatVersion: version, minimumReaderVersion: minimumReaderVersion,
            minimumWriterVersion: minimumWriterVersion, writer: writer, documentIdentifier: documentIdentifier,
            appliedMigrations: migrator.migrations)
    }

    /// What this app may do with the document whose manifest is `manifest`.
    ///
    /// In order: another format, `minReaderVersion` above this version, or an unknown required
    /// feature: refused. A newer version whose `minWriterVersion` is above this version: read-only.
    /// A newer version otherwise: read-write, preserving what is unrecognized. An older version,
    /// or pending migrations: needs migration. Otherwise read-write (preserving unknown fields,
    /// optional features or migrations if there are any).
    ///
    /// - Parameters:
    ///   - manifest: The document's manifest.
    ///   - path: The document's path, named in messages and errors.
    public func compatibility(of manifest: DocumentManifest, at path: String) -> FormatCompatibility {
        let written = "written by \(manifest.writer.name) \(manifest.writer.version)"
        guard manifest.formatIdentifier == identifier else {
            return .refused(
                DocumentKitError(
                    .unsupportedFormat, operation: .open, path: path, originalIsIntact: true,
                    detail: "It is in the format “\(manifest.formatIdentifier)” (\(written)), not “\(identifier)”."))
        }
        if manifest.minimumReaderVersion > version {
            let needs =
                manifest.minimumReaderVersion == manifest.formatVersion
                ? "" : "; it needs a reader of format \(manifest.minimumReaderVersion) or later"
            return .refused(
                DocumentKitError(
                    .newerFormat, operation: .open, path: path, originalIsIntact: true,
                    detail: "It was written by a newer version: format \(manifest.formatVersion), this app reads up to "
                        + "\(version) (“\(identifier)”, \(written)\(needs))."))
        }
        let unknownRequired = manifest.requiredFeatures.subtracting(supportedFeatures).sorted()
        if !unknownRequired.isEmpty {
            let names = unknownRequired.map { "“\($0)”" }.joined(separator: ", ")
            return .refused(
                DocumentKitError(
                    .newerFormat, operation: .open, path: path, originalIsIntact: true,
                    detail: "It needs the feature\(unknownRequired.count == 1 ? "" : "s") \(names), which this app "
                        + "does not know (format \(manifest.formatVersion), this app reads up to \(version); “\(identifier)”, \(written))."))
        }
        if manifest.formatVersion > version, manifest.minimumWriterVersion > version {
            return .readOnly(
                message: "“\(path)” was \(written) in format \(manifest.formatVersion) of “\(identifier)”. This app "
                    + "(format \(version)) can view it but not edit it: changing it needs format \(manifest.minimumWriterVersion) or later.")
        }
        if manifest.formatVersion < version || !migrator.hasCompletedMigrations(manifest), manifest.formatVersion <= version {
            return .needsMigration(steps: migrator.pendingMigrations(for: manifest))
        }
        let unrecognized = UnrecognizedContent(
            newerFormatVersion: manifest.formatVersion > version ? manifest.formatVersion : nil,
            optionalFeatures: manifest.optionalFeatures.subtracting(supportedFeatures).sorted(),
            fields: manifest.additionalFields.keys.filter { !knownFields.contains($0) }.sorted(),
            migrations: migrator.unknownMigrations(of: manifest))
        return unrecognized.isEmpty ? .readWrite : .readWritePreservingUnknown(unrecognized)
    }

    /// Brings a document older than this version up to it, in memory: runs the pending
    /// migration steps, then sets the manifest's versions to what this app writes, and marks the
    /// document so that the next save keeps the original (``MigratingDocument/keepsOriginalOnNextSave``).
    ///
    /// A document in this version with every step applied, or in a newer version, is left as it is.
    ///
    /// - Parameters:
    ///   - document: The document to migrate, in memory.
    ///   - path: The document's path, for errors.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `unsupportedFormat` for another format, `migrationFailed`
    ///   if a step fails (the document is then left as it was).
    public func migrate(_ document: inout MigratingDocument, at path: String) throws(DocumentKitError) {
        guard document.manifest.formatIdentifier == identifier else {
            throw DocumentKitError(
                .unsupportedFormat, operation: .open, path: path, originalIsIntact: true,
                detail: "It is in the format “\(document.manifest.formatIdentifier)”, not “\(identifier)”.")
        }
        let originalVersion = document.manifest.formatVersion
        guard originalVersion <= version else { return }
        var migrated = document
        try migrator.migrate(&migrated, at: path)
        guard originalVersion < version || migrated.keepsOriginalOnNextSave else { return }
        migrated.manifest.formatVersion = version
        migrated.manifest.minimumReaderVersion = minimumReaderVersion
        migrated.manifest.minimumWriterVersion = minimumWriterVersion
        migrated.keepsOriginalOnNextSave = true
        migrated.originalFormatVersion = migrated.originalFormatVersion ?? originalVersion
        document = migrated
    }
}
