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
    /// Boxed: almost every document has none, and a nil box costs 8 bytes, not 40.
    private var storedConflicts: StampBox?
    /// The stamps of the package's subfolders that hold listed members; nil when there are none.
    var memberFolders: MemberFolderStamps?

    /// Makes a record of `entry`; its modification date is the manifest stamp's.
    init(entry: IndexEntry, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?, memberFolders: MemberFolderStamps? = nil) {
        libraryURL = entry.libraryURL
        relativePath = entry.relativePath
        identifier = CompactIdentifier(entry.documentIdentifier)
        formatIdentifier = entry.formatIdentifier.map(Interned.string)
        storedVersion = entry.formatVersion ?? .min
        key = entry.key
        fieldsText = entry.fieldsText
        state = entry.state
        self.package = package
        storedManifest = manifest ?? .none
        storedConflicts = conflicts.map(StampBox.init)
        self.memberFolders = memberFolders
    }

    /// Makes a record from its stored parts (`fieldsText` as ``FieldsText/text(_:)`` makes it).
    init(
        libraryURL: URL, relativePath: String, identifier: String?, formatIdentifier: String?, formatVersion: Int?,
        key: String?, fieldsText: String, state: IndexEntry.State, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?,
        memberFolders: MemberFolderStamps? = nil
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
        storedConflicts = conflicts.map(StampBox.init)
        self.memberFolders = memberFolders
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
        get { storedConflicts?.stamp }
        set { storedConflicts = newValue.map(StampBox.init) }
    }

    /// Whether a refresh can keep the record without a closer look: read under these stamps,
    /// recording no conflict folder and none in `conflictIdentifiers` (the UUIDs of the store's
    /// folders), and in a state that isn't read again at each check.
    func isUnchanged(package: FileStamp?, manifest: FileStamp?, conflictIdentifiers: Set<CompactIdentifier>) -> Bool {
        // An entry with member subfolders is checked by ``EntryReader/memberFoldersUnchanged(_:in:)`` too.
        guard package == self.package, manifest == self.manifest, storedConflicts == nil, memberFolders == nil else { return false }
        switch identifier {
        case .upper, .lower: if conflictIdentifiers.contains(identifier) { return false }
        case .none, .text: return false
        }
        switch state {
        case .current, .tooNew, .damaged: return true
        case .incomplete, .unresolvedConflicts: return false
        }
    }

    /// The entry, made from the record (its modification date is the manifest's).
    var entry: IndexEntry {
        get {
            IndexEntry(
                libraryURL: libraryURL, relativePath: relativePath, documentIdentifier: identifier.text,
                formatIdentifier: formatIdentifier, formatVersion: formatVersion, key: key,
                fieldsText: fieldsText,
                modificationDate: manifest.map { Date(timeIntervalSince1970: Double($0.modificationTime) / 1e9) }, state: state)
        }
        set {
            self = EntryRecord(entry: newValue, package: package, manifest: manifest, conflicts: conflicts, memberFolders: memberFolders)
        }
    }
}

/// A stamp kept out of line, compared by value.
final class StampBox: Sendable, Hashable {
    let stamp: FileStamp
    init(_ stamp: FileStamp) { self.stamp = stamp }
    static func == (a: StampBox, b: StampBox) -> Bool { a.stamp == b.stamp }
    func hash(into hasher: inout Hasher) { hasher.combine(stamp) }
}

/// A document identifier in 16 bytes when it is a UUID in upper or lower case, else its text.
/// Parsed and printed by hand: `UUID(uuidString:)` and `uuidString` cost a `sscanf` and a
/// `sprintf` each, per record.
enum CompactIdentifier: Sendable, Hashable {
    case none
    case upper(UUID)
    case lower(UUID)
    case text(String)

    init(_ text: String?) {
        guard let text else { self = .none; return }
        self = Self.parse(text) ?? .text(text)
    }

    /// The identifier's text, as the manifest has it.
    var text: String? {
        switch self {
        case .none: nil
        case .upper(let uuid): Self.format(uuid, digits: Self.upperDigits)
        case .lower(let uuid): Self.format(uuid, digits: Self.lowerDigits)
        case .text(let text): text
        }
    }

    private static let upperDigits = Array("0123456789ABCDEF".utf8)
    private static let lowerDigits = Array("0123456789abcdef".utf8)

    /// A UUID of 36 characters in one case (digits only count as upper case); nil for any other text.
    private static func parse(_ text: String) -> CompactIdentifier? {
        var text = text
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { bytes -> CompactIdentifier? in
            guard bytes.count == 36 else { return nil }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var sawUpper = false
            var sawLower = false
            var nibbles = 0
            let parsed = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
                for (offset, byte) in bytes.enumerated() {
                    if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                        guard byte == 0x2D else { return false }
                        continue
                    }
                    let value: UInt8
                    switch byte {
                    case 0x30...0x39: value = byte - 0x30
                    case 0x41...0x46: value = byte - 0x41 + 10; sawUpper = true
                    case 0x61...0x66: value = byte - 0x61 + 10; sawLower = true
                    default: return false
                    }
                    out[nibbles / 2] |= nibbles % 2 == 0 ? value << 4 : value
                    nibbles += 1
                }
                return true
            }
            guard parsed, !(sawUpper && sawLower) else { return nil }
            return sawLower ? .lower(UUID(uuid: uuid)) : .upper(UUID(uuid: uuid))
        } ?? nil
    }

    private static func format(_ uuid: UUID, digits: [UInt8]) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[position] = 0x2D
                        position += 1
                    }
                    out[position] = digits[Int(byte >> 4)]
                    out[position + 1] = digits[Int(byte & 0x0F)]
                    position += 2
                }
                return 36
            }
        }
    }
}
