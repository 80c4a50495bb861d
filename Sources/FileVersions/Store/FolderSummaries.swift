import DocumentKitSystem
import Synchronization

/// What a save's look for leftovers (``VersionStore/removeAbandonedEntries(in:key:)``) needs of a
/// document folder that ``WatchedFolderNames`` keeps: its versions in order, and whether anything
/// else is there (an entry being built or left by a killed process, a state entry), brought up to
/// date from the names changed since the last look instead of a pass over every name: a save
/// costs the same at 10 versions and at 10,000.
///
/// Per store, bounded for a process that runs for months (``Generations``: two generations of
/// ``generationLimit`` folders); the versions are kept packed (16 bytes each).
final class FolderSummaries: Sendable {
    /// Document folders per generation.
    static let generationLimit = 64

    /// A document folder's names as of the last look.
    struct Summary: Sendable {
        /// Where the folder's names were then.
        var cursor: WatchedFolderNames.Cursor
        /// Its versions, in the order of their ids (the oldest first).
        var versions: [VersionIdentifier.Packed] = []
        /// Its entries being built or left (`.new-…`, `.swap-…`, `.removing-…`) and its state entries.
        var others: Set<String> = []

        /// The names of a listing, taken in one pass.
        init(cursor: WatchedFolderNames.Cursor, names: some Sequence<String>) {
            self.cursor = cursor
            for name in names { note(name, isThere: true, sorting: false) }
            versions.sort()
        }

        /// Notes that `name` is there now, or gone.
        mutating func note(_ name: String, isThere: Bool, sorting: Bool = true) {
            switch FolderSummaries.kind(of: name) {
            case .version(let id):
                guard sorting else {
                    if isThere { versions.append(id) }
                    return
                }
                var (low, high) = (0, versions.count)
                while low < high {
                    let middle = (low + high) / 2
                    if versions[middle] < id { low = middle + 1 } else { high = middle }
                }
                let index = low
                let found = index < versions.count && versions[index] == id
                if isThere, !found { versions.insert(id, at: index) }
                if !isThere, found { versions.remove(at: index) }
            case .hidden, .state:
                if isThere { others.insert(name) } else { others.remove(name) }
            case nil: break
            }
        }

        /// The versions' number and least id.
        var names: VersionNames { VersionNames(count: versions.count, oldest: versions.first?.name) }
    }

    /// What a name of a document folder is to the look for leftovers: a version, an entry being
    /// built or left (``VersionStore/isHiddenEntry(_:)``), a state entry, or nothing it looks at (nil).
    enum Kind {
        case version(VersionIdentifier.Packed)
        case hidden
        case state
    }

    /// The kind of `name` (the one place the look for leftovers, watched or listed, tells them).
    static func kind(of name: String) -> Kind? {
        if name.utf8.first == UInt8(ascii: ".") {
            return VersionStore.isHiddenEntry(name) ? .hidden : nil
        }
        if StateEntryName.mayBe(name) { return .state }
        return VersionIdentifier.Packed(name).map(Kind.version)
    }

    private let summaries: Mutex<Generations<Summary>>

    /// Summaries of at most two generations of `generationLimit` folders.
    init(generationLimit: Int = FolderSummaries.generationLimit) {
        summaries = Mutex(Generations(limit: generationLimit))
    }

    /// How many folders it holds (for tests: it must stay bounded).
    var count: Int { summaries.withLock { $0.count } }

    /// The versions of the folder at `path` as they are now, with whether anything else is there,
    /// from ``WatchedFolderNames`` (`fileSystem`'s): nil when the folder is not kept watched (the
    /// caller lists it).
    func look(atFolder path: String, using fileSystem: FileSystem) -> (versions: VersionNames, hasOthers: Bool)? {
        // Taken out while brought up to date: a copy left in the table would make each change
        // copy every version.
        let previous = summaries.withLock { summaries in
            let kept = summaries.value(for: path)
            summaries.removeValue(for: path)
            return kept
        }
        guard let answer = WatchedFolderNames.shared.answer(ofFolderAt: path, using: fileSystem, since: previous?.cursor),
            let cursor = answer.cursor
        else { return nil }
        var summary: Summary
        switch answer.names {
        case .all(let names):
            summary = Summary(cursor: cursor, names: names.keys)
        case .changed(let changed):
            // Changes are told only since a cursor, which only a summary kept here gave.
            guard var kept = previous else { return nil }
            for (name, inode) in changed { kept.note(name, isThere: inode != nil) }
            kept.cursor = cursor
            summary = kept
        }
        summaries.withLock { $0.insert(summary, for: path) }
        return (summary.names, !summary.others.isEmpty)
    }
}

extension VersionIdentifier.Packed: Comparable {
    /// In the order of the ids' text (their dates, then their hexadecimal digits).
    static func < (a: Self, b: Self) -> Bool { (a.date, a.digits) < (b.date, b.digits) }

    /// The id this packs (`YYYYMMDDTHHMMSSZ-` and 16 lowercase hexadecimal digits).
    var name: String {
        var bytes = [UInt8](repeating: 0, count: VersionIdentifier.length)
        var date = self.date
        var digits = self.digits
        for index in stride(from: 15, through: 0, by: -1) where index != 8 && index != 15 {
            bytes[index] = UInt8(ascii: "0") + UInt8(date % 10)
            date /= 10
        }
        for index in stride(from: VersionIdentifier.length - 1, through: 17, by: -1) {
            let nibble = UInt8(digits & 0xF)
            bytes[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            digits >>= 4
        }
        (bytes[8], bytes[15], bytes[16]) = (UInt8(ascii: "T"), UInt8(ascii: "Z"), UInt8(ascii: "-"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
