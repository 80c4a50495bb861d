import DocumentKitSystem

/// What a reader may do with a document, from its manifest (`Formats/manifest/v1/SPEC.md`,
/// "Compatibility").
public enum FormatCompatibility: Sendable {
    /// The document is in this reader's version and holds nothing it doesn't understand.
    case readWrite
    /// The document opens for reading and writing, but holds what this reader doesn't
    /// understand (a newer version's content, optional features, fields): a save must keep it,
    /// byte for byte.
    case readWritePreservingUnknown(UnrecognizedContent)
    /// The document opens for reading only: changing it needs a newer writer. The message says so.
    case readOnly(message: String)
    /// The document can't be opened; the error names it, its format and versions, and this reader's.
    case refused(DocumentKitError)
    /// The document is older than this reader: it is migrated in memory through these steps
    /// (none if only its version changes), and written in the new version at the next save,
    /// which asks for the original to be kept (a document with a version store keeps it).
    case needsMigration(steps: [String])

    /// Whether the document may be read.
    public var allowsReading: Bool {
        if case .refused = self { return false }
        return true
    }

    /// Whether the document may be saved.
    public var allowsWriting: Bool {
        switch self {
        case .readWrite, .readWritePreservingUnknown, .needsMigration: true
        case .readOnly, .refused: false
        }
    }

    /// What the outcome means, in a sentence for people.
    public var message: String {
        switch self {
        case .readWrite:
            return "It opens for reading and writing."
        case .readWritePreservingUnknown(let content):
            return "It opens for reading and writing; a save keeps what this app does not understand: \(content)."
        case .readOnly(let message):
            return message
        case .refused(let error):
            return error.description
        case .needsMigration(let steps):
            let how = steps.isEmpty ? "" : " through \(steps.map { "“\($0)”" }.joined(separator: ", "))"
            return "It is in an older version of its format: it is upgraded in memory\(how), and written in the "
                + "new version at the next save."
        }
    }
}

/// What a document holds that a reader doesn't understand, and a save must keep.
public struct UnrecognizedContent: Hashable, Sendable, CustomStringConvertible {
    /// The document's format version, when it is newer than the reader's: content of that
    /// version (fields, members) may be anywhere in it.
    public var newerFormatVersion: Int?
    /// Optional features the reader doesn't know, sorted.
    public var optionalFeatures: [String]
    /// Top-level manifest fields the reader doesn't know, sorted.
    public var fields: [String]
    /// Applied migrations the reader doesn't know, in the order they were applied.
    public var migrations: [String]

    /// Describes unrecognized content.
    public init(newerFormatVersion: Int? = nil, optionalFeatures: [String] = [], fields: [String] = [], migrations: [String] = []) {
        self.newerFormatVersion = newerFormatVersion
        self.optionalFeatures = optionalFeatures
        self.fields = fields
        self.migrations = migrations
    }

    /// Whether there is nothing unrecognized.
    public var isEmpty: Bool {
        newerFormatVersion == nil && optionalFeatures.isEmpty && fields.isEmpty && migrations.isEmpty
    }

    public var description: String {
        func list(_ names: [String]) -> String { names.map { "“\($0)”" }.joined(separator: ", ") }
        var parts: [String] = []
        if let newerFormatVersion { parts.append("the content of format version \(newerFormatVersion)") }
        if !optionalFeatures.isEmpty { parts.append("the optional features \(list(optionalFeatures))") }
        if !fields.isEmpty { parts.append("the fields \(list(fields))") }
        if !migrations.isEmpty { parts.append("the migrations \(list(migrations))") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: "; ")
    }
}
