import DocumentKitSystem
import FormatVersioning
import Foundation

/// One document of a library as the index knows it: where it is, what its manifest says, and
/// whether it can be opened (an `NSMetadataItem`).
public struct IndexEntry: Sendable, Hashable {
    /// Whether a document can be opened, as its manifest and members show it.
    public enum State: Sendable, Hashable {
        /// Its manifest reads, is of the index's format and version, and every member it lists is there with its size.
        case current
        /// As ``current``, and the library's version store keeps this many unresolved conflict versions of it.
        case unresolvedConflicts(Int)
        /// Some members are missing or of another size, or the manifest is not there yet (a sync
        /// engine may be delivering it): what is missing, in words.
        case incomplete(String)
        /// The manifest needs a reader of this version or newer.
        case tooNew(Int)
        /// The manifest is malformed, or of another format: why, naming the file.
        case damaged(String)
    }

    /// The library folder the entry is in.
    public var libraryURL: URL
    /// The package's path relative to the library, such as `Work/Plan.note`.
    public var relativePath: String
    /// The manifest's document identifier: it follows the document across renames.
    public var documentIdentifier: String?
    /// The manifest's format identifier.
    public var formatIdentifier: String?
    /// The manifest's format version.
    public var formatVersion: Int?
    /// The value of the app's key field (``DocumentIndex/Configuration/keyField``) when it is a string.
    public var key: String?
    /// The manifest fields the index keeps (``DocumentIndex/Configuration/fields``), as their JSON text.
    ///
    /// Parsed when asked for: an index of 100,000 entries listed by key and date parses none.
    public var fields: [String: RawJSONValue] {
        get { FieldsText.fields(fieldsText) }
        set { fieldsText = FieldsText.text(newValue) }
    }
    /// ``fields`` as one string (`name NUL json-text NUL …`, sorted by name): what is stored and compared.
    var fieldsText: String
    /// When the manifest was last modified.
    public var modificationDate: Date?
    /// Whether the document can be opened.
    public var state: State

    /// The package's URL.
    public var url: URL { libraryURL.appendingPathComponent(relativePath, isDirectory: true) }

    /// Makes an entry.
    public init(
        libraryURL: URL, relativePath: String, documentIdentifier: String?, formatIdentifier: String?,
        formatVersion: Int?, key: String?, fields: [String: RawJSONValue], modificationDate: Date?, state: State
    ) {
        self.init(
            libraryURL: libraryURL, relativePath: relativePath, documentIdentifier: documentIdentifier,
            formatIdentifier: formatIdentifier, formatVersion: formatVersion, key: key, fieldsText: FieldsText.text(fields),
            modificationDate: modificationDate, state: state)
    }

    /// Makes an entry whose fields are `fieldsText` (as ``FieldsText/text(_:)`` makes it).
    init(
        libraryURL: URL, relativePath: String, documentIdentifier: String?, formatIdentifier: String?,
        formatVersion: Int?, key: String?, fieldsText: String, modificationDate: Date?, state: State
    ) {
        self.libraryURL = libraryURL
        self.relativePath = relativePath
        self.documentIdentifier = documentIdentifier
        self.formatIdentifier = formatIdentifier
        self.formatVersion = formatVersion
        self.key = key
        self.fieldsText = fieldsText
        self.modificationDate = modificationDate
        self.state = state
    }
}

/// An entry's kept fields as one string: `name NUL json-text NUL …`, sorted by name.
enum FieldsText {
    /// The fields as one string, sorted by name.
    static func text(_ fields: [String: RawJSONValue]) -> String {
        fields.isEmpty ? "" : fields.sorted { $0.key < $1.key }.map { $0.key + "\u{0}" + $0.value.jsonText }.joined(separator: "\u{0}")
    }

    /// The fields of a string ``text(_:)`` made.
    static func fields(_ text: String) -> [String: RawJSONValue] {
        guard !text.isEmpty else { return [:] }
        let parts = text.split(separator: "\u{0}", omittingEmptySubsequences: false)
        var fields: [String: RawJSONValue] = [:]
        fields.reserveCapacity(parts.count / 2)
        var index = 0
        while index + 1 < parts.count {
            if let value = try? RawJSONValue(jsonText: String(parts[index + 1])) { fields[String(parts[index])] = value }
            index += 2
        }
        return fields
    }
}

/// A document that moved: the same document identifier, gone from one path and at another.
public struct IndexMove: Sendable, Hashable {
    /// The entry as it was at its old path.
    public var from: IndexEntry
    /// The entry at its new path.
    public var to: IndexEntry

    /// Makes a move.
    public init(from: IndexEntry, to: IndexEntry) {
        self.from = from
        self.to = to
    }
}
