import DocumentKitSystem
import FormatVersioning
import Foundation

/// An entry with the validators it was read under, kept compact: an index holds one per document
/// of the library (100,000 of them in under 400 bytes each). The ``entry`` is made on demand.
struct EntryRecord: Sendable, Hashable {
    /// The library folder (one shared URL for every record).
    var libraryURL: URL
    /// The package's path relative to the library.
    var relativePath: String
    /// The document identifier: 16 bytes when it is a UUID.
    var identifier: CompactIdentifier
    /// The format identifier, one shared string per format (``Interned``).
    var formatIdentifier: String?
    private var storedVersion: Int
    /// The key field's value.
    var key: String?
    /// The kept fields as one string: `name NUL json-text NUL …`, sorted by name.
    var fieldsText: String
    /// Whether the document can be opened.
    var state: IndexEntry.State
    /// The package folder's stamp: a member renamed into it (a sync engine's delivery) or an
    /// atomic swap of the whole package changes it.
    var package: FileStamp
    private var storedManifest: FileStamp
    private var storedConflicts: FileStamp

    /// Makes a record of `entry`; its modification date is the manifest stamp's.
    init(entry: IndexEntry, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?) {
        libraryURL = entry.libraryURL
        relativePath = entry.relativePath
        identifier = CompactIdentifier(entry.documentIdentifier)
        formatIdentifier = entry.formatIdentifier.map(Interned.string)
        storedVersion = entry.formatVersion ?? .min
        key = entry.key
        fieldsText = Self.fieldsText(entry.fields)
        state = entry.state
        self.package = package
        storedManifest = manifest ?? .none
        storedConflicts = conflicts ?? .none
    }

    /// Makes a record from its stored parts (`fieldsText` as ``fieldsText(_:)`` makes it).
    init(
        libraryURL: URL, relativePath: String, identifier: String?, formatIdentifier: String?, formatVersion: Int?,
        key: String?, fieldsText: String, state: IndexEntry.State, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?
    ) {
        self.libraryURL = libraryURL
        self.relativePath = relativePath
        self.identifier = CompactIdentifier(identifier)
        self.formatIdentifier = formatIdentifier.map(Interned.string)
        storedVersion = formatVersion ?? .min
        self.key = key
        self.fieldsText = fieldsText
        self.state = state
        self.package = package
        storedManifest = manifest ?? .none
        storedConflicts = conflicts ?? .none
    }

    /// The manifest's format version.
    var formatVersion: Int? { storedVersion == .min ? nil : storedVersion }

    /// The manifest's stamp, nil when there was none: an in-place edit changes it.
    var manifest: FileStamp? {
        get { storedManifest == .none ? nil : storedManifest }
        set { storedManifest = newValue ?? .none }
    }

    /// The stamp of the document's folder in the version store, nil when it has none.
    var conflicts: FileStamp? {
        get { storedConflicts == .none ? nil : storedConflicts }
        set { storedConflicts = newValue ?? .none }
    }

    /// The entry, made from the record (its modification date is the manifest's).
    var entry: IndexEntry {
        get {
            IndexEntry(
                libraryURL: libraryURL, relativePath: relativePath, documentIdentifier: identifier.text,
                formatIdentifier: formatIdentifier, formatVersion: formatVersion, key: key,
                fields: Self.fields(fieldsText),
                modificationDate: manifest.map { Date(timeIntervalSince1970: Double($0.modificationTime) / 1e9) }, state: state)
        }
        set {
            self = EntryRecord(entry: newValue, package: package, manifest: manifest, conflicts: conflicts)
        }
    }

    /// The fields as one string, sorted by name.
    static func fieldsText(_ fields: [String: RawJSONValue]) -> String {
        fields.isEmpty ? "" : fields.sorted { $0.key < $1.key }.map { $0.key + "\u{0}" + $0.value.jsonText }.joined(separator: "\u{0}")
    }

    /// The fields of a string ``fieldsText(_:)`` made.
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

/// A document identifier in 16 bytes when it is a UUID in upper or lower case, else its text.
enum CompactIdentifier: Sendable, Hashable {
    case none
    case upper(UUID)
    case lower(UUID)
    case text(String)

    init(_ text: String?) {
        guard let text else { self = .none; return }
        if text.utf8.count == 36, let uuid = UUID(uuidString: text) {
            let upper = uuid.uuidString
            if text == upper { self = .upper(uuid); return }
            if text == upper.lowercased() { self = .lower(uuid); return }
        }
        self = .text(text)
    }

    /// The identifier's text, as the manifest has it.
    var text: String? {
        switch self {
        case .none: nil
        case .upper(let uuid): uuid.uuidString
        case .lower(let uuid): uuid.uuidString.lowercased()
        case .text(let text): text
        }
    }
}
