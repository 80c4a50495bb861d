import DocumentKitSystem
import FormatVersioning
import Foundation

/// An entry with the validators it was read under, kept compact: an index holds one per document
/// of the library (100,000 of them in under 400 bytes each). The ``entry`` is made on demand.
struct EntryRecord: Sendable, Hashable {
    // The stored properties are ordered so that the small ones fill the padding after the
    // 17-byte enums: 168 bytes in all.

    /// The document identifier: 16 bytes when it is a UUID.
    var identifier: CompactIdentifier
    /// The format identifier and version, one shared pair per format and version (``InternTable``).
    private var formatAndVersion: UInt32
    /// Whether the document can be opened.
    var state: IndexEntry.State
    /// The library folder, one shared URL for every record (``InternTable``).
    private var library: UInt32
    /// The package's path relative to the library, NUL, then the key and the kept fields as
    /// ``KeyAndFields`` joins them: one allocation, not three (a path holds no NUL).
    private var text: String
    /// The package folder's stamp: a member renamed into it (a sync engine's delivery) or an
    /// atomic swap of the whole package changes it.
    var package: FileStamp
    private var storedManifest: FileStamp
    /// What almost no document has, out of line: a nil box costs 8 bytes.
    private var rare: RareStamps?

    /// Makes a record of `entry`; its modification date is the manifest stamp's.
    init(entry: IndexEntry, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?, memberFolders: MemberFolderStamps? = nil) {
        self.init(
            libraryURL: entry.libraryURL, relativePath: entry.relativePath, identifier: entry.documentIdentifier,
            formatIdentifier: entry.formatIdentifier, formatVersion: entry.formatVersion, key: entry.key,
            fieldsText: entry.fieldsText, state: entry.state, package: package, manifest: manifest, conflicts: conflicts,
            memberFolders: memberFolders)
    }

    /// The same, the shared parts looked up through `interner` (a reader's, for many records).
    init(
        entry: IndexEntry, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?, memberFolders: MemberFolderStamps?,
        interner: inout RecordInterner
    ) {
        self.init(
            interner: &interner, relativePath: entry.relativePath, identifier: entry.documentIdentifier,
            formatIdentifier: entry.formatIdentifier, formatVersion: entry.formatVersion, key: entry.key,
            fieldsText: entry.fieldsText, state: entry.state, package: package, manifest: manifest, conflicts: conflicts,
            memberFolders: memberFolders)
    }

    /// Makes a record from its stored parts (`fieldsText` as ``FieldsText/text(_:)`` makes it).
    init(
        libraryURL: URL, relativePath: String, identifier: String?, formatIdentifier: String?, formatVersion: Int?,
        key: String?, fieldsText: String, state: IndexEntry.State, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?,
        memberFolders: MemberFolderStamps? = nil
    ) {
        var interner = RecordInterner(libraryURL: libraryURL)
        self.init(
            interner: &interner, relativePath: relativePath, identifier: identifier, formatIdentifier: formatIdentifier,
            formatVersion: formatVersion, key: key, fieldsText: fieldsText, state: state, package: package, manifest: manifest,
            conflicts: conflicts, memberFolders: memberFolders)
    }

    /// The same, the shared parts looked up through `interner` (a loader's, for many records).
    init(
        interner: inout RecordInterner, relativePath: String, identifier: String?, formatIdentifier: String?, formatVersion: Int?,
        key: String?, fieldsText: String, state: IndexEntry.State, package: FileStamp, manifest: FileStamp?, conflicts: FileStamp?,
        memberFolders: MemberFolderStamps? = nil
    ) {
        self.identifier = CompactIdentifier(identifier)
        formatAndVersion = interner.format(formatIdentifier, formatVersion)
        self.state = state
        library = interner.library
        text = KeyAndFields.text(path: relativePath, key: key, fieldsText: fieldsText)
        self.package = package
        storedManifest = manifest ?? .none
        rare = RareStamps(conflicts: conflicts, memberFolders: memberFolders)
    }

    /// A format identifier and version, as a record refers to it.
    fileprivate struct FormatAndVersion: Hashable, Sendable {
        var identifier: String?
        var version: Int?
    }

    fileprivate static let formats = InternTable<FormatAndVersion>()
    fileprivate static let libraries = InternTable<URL>()

    /// The library folder.
    var libraryURL: URL { Self.libraries.value(at: library) }
    /// The manifest's format identifier.
    var formatIdentifier: String? { Self.formats.value(at: formatAndVersion).identifier }
    /// The manifest's format version.
    var formatVersion: Int? { Self.formats.value(at: formatAndVersion).version }

    /// The stamps of the package's subfolders that hold listed members; nil when there are none.
    var memberFolders: MemberFolderStamps? {
        get { rare?.memberFolders }
        set { rare = RareStamps(conflicts: conflicts, memberFolders: newValue) }
    }

    /// The package's path relative to the library.
    var relativePath: String { String(pathPart) }

    /// ``relativePath`` without a copy (for comparing and hashing it).
    var pathPart: Substring { text[..<separator] }

    private var keyAndFields: Substring { text[text.utf8.index(after: separator)...] }

    /// Where the path ends.
    private var separator: String.Index {
        let offset = text.utf8.withContiguousStorageIfAvailable { $0.firstIndex(of: 0) } ?? text.utf8.firstIndex(of: 0).map {
            text.utf8.distance(from: text.startIndex, to: $0)
        }
        guard let offset else { return text.endIndex }
        return text.utf8.index(text.startIndex, offsetBy: offset)
    }

    /// The key field's value.
    var key: String? {
        get { KeyAndFields.split(keyAndFields).key }
        set { text = KeyAndFields.text(path: pathPart, key: newValue, fieldsText: fieldsText) }
    }

    /// The kept fields as one string: `name NUL json-text NUL …`, sorted by name.
    var fieldsText: String {
        get { String(KeyAndFields.split(keyAndFields).fields) }
        set { text = KeyAndFields.text(path: pathPart, key: key, fieldsText: newValue) }
    }

    /// The manifest's stamp, nil when there was none: an in-place edit changes it.
    var manifest: FileStamp? {
        get { storedManifest == .none ? nil : storedManifest }
        set { storedManifest = newValue ?? .none }
    }

    /// The stamp of the document's folder in the version store, nil when it has none.
    var conflicts: FileStamp? {
        get { rare?.conflicts }
        set { rare = RareStamps(conflicts: newValue, memberFolders: memberFolders) }
    }

    /// Whether a refresh can keep the record without a closer look: read under these stamps,
    /// recording no conflict folder and none in `conflictIdentifiers` (the UUIDs of the store's
    /// folders), and in a state that isn't read again at each check.
    func isUnchanged(package: FileStamp?, manifest: FileStamp?, conflictIdentifiers: Set<CompactIdentifier>) -> Bool {
        // An entry with member subfolders is checked by ``EntryReader/memberFoldersUnchanged(_:in:)`` too.
        guard package == self.package, manifest == self.manifest, rare == nil else { return false }
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
            let (key, fields) = KeyAndFields.split(keyAndFields)  // once, for both
            return IndexEntry(
                libraryURL: libraryURL, relativePath: relativePath, documentIdentifier: identifier.text,
                formatIdentifier: formatIdentifier, formatVersion: formatVersion, key: key,
                fieldsText: String(fields),
                modificationDate: manifest.map { Date(timeIntervalSince1970: Double($0.modificationTime) / 1e9) }, state: state)
        }
        set {
            self = EntryRecord(entry: newValue, package: package, manifest: manifest, conflicts: conflicts, memberFolders: memberFolders)
        }
    }
}

/// The shared parts of the records a loader makes: the library's index, looked up once (a URL
/// is slow to hash), and the last format and version, compared before they are looked up.
struct RecordInterner: Sendable {
    let library: UInt32
    private var lastFormat: (identifier: String?, version: Int?, index: UInt32)?

    init(libraryURL: URL) {
        library = EntryRecord.libraries.index(of: libraryURL)
    }

    /// The index of the format `identifier` at `version`.
    mutating func format(_ identifier: String?, _ version: Int?) -> UInt32 {
        if let lastFormat, lastFormat.identifier == identifier, lastFormat.version == version { return lastFormat.index }
        let index = EntryRecord.formats.index(of: .init(identifier: identifier, version: version))
        lastFormat = (identifier, version, index)
        return index
    }
}

/// A record's conflict-folder stamp and member folder stamps, kept out of line and compared by
/// value; made only when there is one of them.
final class RareStamps: Sendable, Hashable {
    let conflicts: FileStamp?
    let memberFolders: MemberFolderStamps?

    /// Nil when there is neither.
    init?(conflicts: FileStamp?, memberFolders: MemberFolderStamps?) {
        guard conflicts != nil || memberFolders != nil else { return nil }
        self.conflicts = conflicts
        self.memberFolders = memberFolders
    }

    static func == (a: RareStamps, b: RareStamps) -> Bool { a.conflicts == b.conflicts && a.memberFolders == b.memberFolders }

    func hash(into hasher: inout Hasher) {
        hasher.combine(conflicts)
        hasher.combine(memberFolders)
    }
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

/// A record's path, key and fields text in one string: the path, NUL, then `-` and the fields
/// text when there is no key, else the key's length in UTF-8 bytes (decimal), `:`, the key, then
/// the fields text.
enum KeyAndFields {
    /// `path NUL` and the key and fields joined, made in one allocation (a load makes 100,000).
    static func text(path: some StringProtocol, key: String?, fieldsText: String) -> String {
        let length = key.map { String($0.utf8.count) }
        var text = ""
        text.reserveCapacity(path.utf8.count + 2 + (length?.utf8.count ?? 0) + (key?.utf8.count ?? 0) + fieldsText.utf8.count)
        text += path
        text += "\u{0}"
        if let key, let length {
            text += length
            text += ":"
            text += key
        } else {
            text += "-"
        }
        text += fieldsText
        return text
    }

    static func split(_ text: Substring) -> (key: String?, fields: Substring) {
        let utf8 = text.utf8
        guard let first = utf8.first, first != UInt8(ascii: "-"), let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
            let length = Int(text[..<colon])
        else { return (nil, text.isEmpty ? "" : text[utf8.index(after: text.startIndex)...]) }
        let keyStart = utf8.index(after: colon)
        let keyEnd = utf8.index(keyStart, offsetBy: length)
        return (String(text[keyStart..<keyEnd]), text[keyEnd...])
    }
}
