import DocumentKitSystem
import FormatVersioning
import Synchronization

/// What this process last found in the version entries of a document folder, for
/// ``VersionStore/unresolvedConflictCount(ofItemAt:)``: for each entry, the identity its
/// `record.json` had and whether that record is an unresolved conflict. A count then reads no
/// record whose identity is unchanged: one listing of the folder and one `fstatat` per entry,
/// no record decoded, no ``FileVersion`` made.
///
/// A record's classification is remembered only when the record is older than the moment its
/// reading began (the racy-timestamp rule of ``/FormatVersioning/CachedMemberDigest/isTrusted``).
/// Bounded for a process that runs for months (``Generations``): two generations of
/// ``generationLimit`` folders.
final class ConflictTally: Sendable {
    /// Document folders per generation.
    static let generationLimit = 128

    /// An entry as last classified, in 16 bytes: a hash of its record's identity (all bits but
    /// the lowest), whether the record is an unresolved conflict (the lowest bit), and, for an
    /// entry of a store whose entries never change, a hash of the `stat`s of its folder and
    /// record taken when it was last read (``filesIdentity``).
    struct Entry: Sendable, Equatable {
        private var bits: UInt64
        /// The hash of the entry's files' identities when read (``VersionStore``'s
        /// `entryFilesIdentity`), or 0: none that may vouch for the entry in a later span.
        private(set) var filesIdentity: Int

        init(recordIdentity: Int, isUnresolvedConflict: Bool, filesIdentity: Int = 0) {
            bits = UInt64(bitPattern: Int64(recordIdentity)) & ~1 | (isUnresolvedConflict ? 1 : 0)
            self.filesIdentity = filesIdentity
        }

        /// Whether the record had the identity whose hash is `hash` (``ConflictTally/hash(of:)``).
        func hasRecordIdentity(_ hash: Int) -> Bool { bits & ~1 == UInt64(bitPattern: Int64(hash)) & ~1 }

        var isUnresolvedConflict: Bool { bits & 1 == 1 }

        /// This entry, known by the record identity `hash` from now on (a new span of the trust
        /// horizon, its files found as they were).
        func renewed(as hash: Int) -> Entry {
            Entry(recordIdentity: hash, isUnresolvedConflict: isUnresolvedConflict, filesIdentity: filesIdentity)
        }
    }

    /// A folder's entries by version id.
    typealias Folder = [VersionIdentifier.Packed: Entry]

    /// What a count of a document folder kept: its entries (``Folder``), and, for a folder whose
    /// names ``WatchedFolderNames`` keeps, what the next count needs to bring the count up to date
    /// from the names changed since (``WatchedFolderNames/Answer/Names/changed``) instead of a
    /// pass over every version.
    struct Counted {
        var entries: Folder = [:]
        /// Where the folder's names were when counted; nil: the next count passes over every version.
        var cursor: WatchedFolderNames.Cursor?
        /// The span of the trust horizon the entries were looked at in (a new span: a pass over every version).
        var span: Int64 = 0
        /// Versions there but not settled (not whole yet, newest state not readable yet, or a
        /// record in a store whose entries may change): looked at again at every count, by inode number.
        var unsettled: [String: UInt64] = [:]
        /// The versions that were unresolved conflicts, by name.
        var unresolved: Set<String> = []
        /// The state entries of each version id, oldest first.
        var states: [String: [(name: String, inode: UInt64)]] = [:]

        /// Takes what a look at the version `name` (`id`, its entry's inode number `inode`) found:
        /// nil when it is not whole, else its entry and whether that may be remembered.
        mutating func settle(_ name: String, id: VersionIdentifier.Packed, inode: UInt64, as found: (entry: Entry, isTrusted: Bool)?) {
            if let found, found.isTrusted {
                entries[id] = found.entry
                unsettled[name] = nil
            } else {
                entries[id] = nil
                unsettled[name] = inode
            }
            if found?.entry.isUnresolvedConflict == true { unresolved.insert(name) } else { unresolved.remove(name) }
        }
    }

    /// What a count found in a folder whose `stat` it took first: while the folder's `stat` and
    /// the span of the trust horizon are the same, on a file system with exact change times
    /// (``ExactChangeTimes``), its names are the same and the count needs no listing.
    struct Listing: Sendable, Equatable {
        /// The folder's identity and link count before it was listed.
        var identity: FileIdentity
        var linkCount: UInt64
        /// The span of the trust horizon the entries were looked at in.
        var span: Int64
        /// The ids of the versions that were unresolved conflicts (each one's contents are still
        /// checked at every count).
        var unresolved: [String]
        /// The versions being built then (`.new-…`): writing a record into one (the step before
        /// its rename, which a killed process may not reach) changes no name of the folder.
        var building: [String] = []

        /// Whether the folder's `status`, taken in the span `span`, is the one listed.
        func describes(_ status: FileStatus, span: Int64) -> Bool {
            self.span == span && linkCount == status.linkCount && identity == FileIdentity(status)
        }
    }

    /// The count of one document folder, behind its own lock: counts of the folder take turns
    /// (each brings it up to date in place), counts of other folders don't wait.
    final class Counting: Sendable {
        let counted = Mutex(Counted())
    }

    private let generations: Mutex<Generations<Counting>>
    /// The listings, shared by every store of the process (a server's library and its index
    /// each have one): by the folder's path. Two generations of 1,024 folders.
    private static let listings = Mutex(Generations<Listing>(limit: 1_024))

    /// A tally of at most two generations of `generationLimit` folders.
    init(generationLimit: Int = ConflictTally.generationLimit) {
        generations = Mutex(Generations(limit: generationLimit))
    }

    /// The last count's listing of the folder at `path` (by any store of this process), if one
    /// was remembered.
    static func listing(ofFolderAt path: String) -> Listing? {
        Self.listings.withLock { $0.value(for: path) }
    }

    /// Remembers (or, nil, forgets) the listing of the folder at `path`.
    static func remember(_ listing: Listing?, ofFolderAt path: String) {
        Self.listings.withLock { generations in
            if let listing { generations.insert(listing, for: path) } else { generations.removeValue(for: path) }
        }
    }

    /// How many counts passed over every version of their folder (for tests: a count that
    /// follows the changed names makes none).
    let passes = Atomic<Int>(0)

    /// How many folders it holds (for tests: it must stay bounded).
    var count: Int { generations.withLock { $0.count } }

    /// The count of the folder named `folderName` (a new, empty one if none was remembered).
    func counting(named folderName: String) -> Counting {
        generations.withLock { generations in
            if let counting = generations.value(for: folderName) { return counting }
            let counting = Counting()
            generations.insert(counting, for: folderName)
            return counting
        }
    }

    /// The hash that stands for a record's identity in an ``Entry``.
    static func hash(of identity: FileIdentity) -> Int {
        var hasher = Hasher()
        hasher.combine(identity)
        return hasher.finalize()
    }
}

extension VersionIdentifier {
    /// A version id in 16 bytes (its date's 14 digits as a number, its 16 hexadecimal digits
    /// as another): how ``ConflictTally`` keys entries without keeping their names.
    struct Packed: Hashable, Sendable {
        var date: UInt64
        var digits: UInt64

        /// The packed form of `id`; nil if it is not a version id (``VersionIdentifier/isValid(_:)``).
        init?(_ id: String) {
            guard id.utf8.count == VersionIdentifier.length,
                let packed = id.utf8.withContiguousStorageIfAvailable(Self.pack) ?? Array(id.utf8).withUnsafeBufferPointer(Self.pack)
            else { return nil }
            self = packed
        }

        private init(date: UInt64, digits: UInt64) {
            (self.date, self.digits) = (date, digits)
        }

        /// The packed form of an id's bytes, nil if they are not an id: over the bytes' buffer
        /// (a count does this for every version).
        private static func pack(_ bytes: UnsafeBufferPointer<UInt8>) -> Packed? {
            guard VersionIdentifier.isValid(bytes) else { return nil }
            var date: UInt64 = 0
            var digits: UInt64 = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                switch index {
                case 8, 15, 16: continue
                case ..<16: date = date * 10 + UInt64(byte - UInt8(ascii: "0"))
                default: digits = digits << 4 | UInt64(byte <= UInt8(ascii: "9") ? byte - UInt8(ascii: "0") : byte - UInt8(ascii: "a") + 10)
                }
            }
            return Packed(date: date, digits: digits)
        }
    }
}
