import Foundation

/// A document's description of itself: its format and version, what a reader or writer needs to
/// open it, who wrote it, its stable identifier and, for a package, every member with its size
/// and SHA-256 (`Formats/manifest/v1/SPEC.md`).
///
/// A package keeps its manifest as a member (`Info.json`, say); a single file keeps it where its
/// format says (a header or a sidecar). Read one with ``init(jsonData:path:)`` or
/// ``init(package:manifestName:packagePath:)``, write one with ``jsonData()``.
///
/// Everything the specification does not define is kept in ``additionalFields`` as its exact
/// JSON text: the format's own fields (a note's `title`) and fields of newer versions, which a
/// save must write back byte for byte.
public struct DocumentManifest: Hashable, Sendable {
    /// The app that wrote a document.
    public struct Writer: Hashable, Sendable {
        /// The app's name, such as `notes`.
        public var name: String
        /// The app's version, such as `1.4.2`.
        public var version: String
        /// Fields of the writer object this specification does not define, as their exact text.
        public var additionalFields: [String: RawJSONValue]

        /// Describes the app that writes a document.
        public init(name: String, version: String, additionalFields: [String: RawJSONValue] = [:]) {
            self.name = name
            self.version = version
            self.additionalFields = additionalFields
        }
    }

    /// The format, in reverse-DNS form, such as `org.documentkit.notes` (JSON key `format`).
    public var formatIdentifier: String
    /// The version of the format the document was written in.
    public var formatVersion: Int
    /// The oldest reader version that may read the document (`minReaderVersion`; when absent,
    /// ``formatVersion``).
    public var minimumReaderVersion: Int
    /// The oldest writer version that may change the document (`minWriterVersion`; when absent,
    /// ``formatVersion``).
    public var minimumWriterVersion: Int
    /// Features a reader must know to open the document at all.
    public var requiredFeatures: Set<String>
    /// Features a reader may ignore; a save keeps them and their data.
    public var optionalFeatures: Set<String>
    /// The app that wrote this version of the document.
    public var writer: Writer
    /// The document's stable identifier, fixed when it is created: it follows the document
    /// across renames and copies. By convention an upper-case UUID.
    public var documentIdentifier: String
    /// For a package, every member but the manifest, by relative path (`attachments/a.jpg`);
    /// nil when the manifest does not record members (files written before they were recorded).
    public var members: [String: MemberRecord]?
    /// The identifiers of the migrations applied to the document, in the order they ran.
    public var appliedMigrations: [String]
    /// Every top-level field the specification does not define, as its exact JSON text.
    public var additionalFields: [String: RawJSONValue]

    /// A manifest with the given values. The minimum versions default to `formatVersion`.
    public init(
        formatIdentifier: String, formatVersion: Int, minimumReaderVersion: Int? = nil,
        minimumWriterVersion: Int? = nil, requiredFeatures: Set<String> = [], optionalFeatures: Set<String> = [],
        writer: Writer, documentIdentifier: String = UUID().uuidString, members: [String: MemberRecord]? = nil,
        appliedMigrations: [String] = [], additionalFields: [String: RawJSONValue] = [:]
    ) {
        self.formatIdentifier = formatIdentifier
        self.formatVersion = formatVersion
        self.minimumReaderVersion = minimumReaderVersion ?? formatVersion
        self.minimumWriterVersion = minimumWriterVersion ?? formatVersion
        self.requiredFeatures = requiredFeatures
        self.optionalFeatures = optionalFeatures
        self.writer = writer
        self.documentIdentifier = documentIdentifier
        self.members = members
        self.appliedMigrations = appliedMigrations
        self.additionalFields = additionalFields
    }
}

/// The size and SHA-256 of one member of a package, as its manifest records them.
public struct MemberRecord: Hashable, Sendable {
    /// The size in bytes.
    public var size: Int64
    /// The SHA-256 of the contents, as 64 lower-case hexadecimal digits.
    public var sha256: String
    /// Fields of the record this specification does not define, as their exact text.
    public var additionalFields: [String: RawJSONValue]

    /// A record of a member's size and digest.
    public init(size: Int64, sha256: String, additionalFields: [String: RawJSONValue] = [:]) {
        self.size = size
        self.sha256 = sha256
        self.additionalFields = additionalFields
    }
}
