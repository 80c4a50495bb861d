import DocumentKitSystem
import Synchronization

/// The records of an index by relative path: one contiguous array of records and a table of
/// positions, so that 100,000 records cost their own size and not a hash table of them.
///
/// The positions are an open-addressing table (linear probing, at most half full) of 4-byte
/// slots that hold a record's position plus one (0: empty), the path compared in the record
/// itself: 100,000 records need 1 MiB of slots, where a `[String: Int32]` kept a 16-byte key
/// and a value in each of its 262,144 buckets (5 MiB).
struct RecordTable: Sendable {
    private var slots: [Int32] = []
    private var storage: ContiguousArray<EntryRecord> = []
    /// Unique to this table's set of removals: a new table and every removal take a number no
    /// table had before (a copy keeps its original's). Whoever saw a table at one removal
    /// generation knows that no record it saw has gone while the generation is the same.
    private(set) var removalGeneration = RecordTable.nextGeneration()

    private static let generations = Atomic<UInt64>(0)
    private static func nextGeneration() -> UInt64 { generations.wrappingAdd(1, ordering: .relaxed).newValue }

    init() {}

    /// A table of `records`; of two with the same path, the first is kept.
    init(_ records: some Collection<EntryRecord>) {
        reserveCapacity(records.count)
        for record in records { insertIfAbsent(record) }
    }

    /// The slot holding `path`, or the empty slot where it would go (with nil). Paths are
    /// compared and hashed by their UTF-8 bytes, as the file system tells names apart.
    private func find(_ path: some StringProtocol) -> (slot: Int, position: Int?) {
        let mask = slots.count - 1
        var slot = Self.hash(path) & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (slot, nil) }
            let position = Int(stored) - 1
            if UTF8Order.compare(storage[position].pathPart, path) == 0 { return (slot, position) }
            slot = (slot + 1) & mask
        }
    }

    /// The hash of a path's UTF-8 bytes (the same for a `String` and a `Substring`).
    private static func hash(_ path: some StringProtocol) -> Int {
        var hasher = Hasher()
        let hashed: Void? = path.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil {
            var copy = String(path)
            copy.makeContiguousUTF8()
            copy.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
        return hasher.finalize()
    }

    private func position(of path: String) -> Int? {
        slots.isEmpty ? nil : find(path).position
    }

    /// Whether a record has the path `path` (without copying it).
    func contains(_ path: String) -> Bool { position(of: path) != nil }

    /// Makes room for one more record (the table at most half full).
    private mutating func growIfNeeded() {
        guard (storage.count + 1) * 2 > slots.count else { return }
        rehash(capacity: Swift.max(16, slots.count * 2))
    }

    private mutating func rehash(capacity: Int) {
        slots = [Int32](repeating: 0, count: capacity)
        for position in storage.indices {
            let (slot, _) = find(storage[position].pathPart)
            slots[slot] = Int32(position + 1)
        }
    }

    /// The record at `path`; setting nil removes it.
    subscript(path: String) -> EntryRecord? {
        get { position(of: path).map { storage[$0] } }
        set {
            guard let newValue else { _ = removeValue(forKey: path); return }
            assert(newValue.pathPart == path, "a record is kept under its own path")
            if let position = position(of: path) {
                storage[position] = newValue
            } else {
                insertIfAbsent(newValue)
            }
        }
    }

    /// Adds `record` unless a record has its path (a duplicate path, rare: the first one stays).
    mutating func insertIfAbsent(_ record: EntryRecord) {
        growIfNeeded()
        let (slot, existing) = find(record.pathPart)
        guard existing == nil else { return }
        storage.append(record)
        slots[slot] = Int32(storage.count)
    }

    /// ``EntryRecord/isUnchanged(package:manifest:conflictIdentifiers:)`` of the record at `path`
    /// (false if there is none), looked at in place.
    func isUnchanged(_ path: String, _ stamps: PackageStamps, conflictIdentifiers: Set<CompactIdentifier>) -> Bool {
        guard let position = position(of: path) else { return false }
        return storage[position].isUnchanged(package: stamps.package, manifest: stamps.manifest, conflictIdentifiers: conflictIdentifiers)
    }

    /// Removes the record at `path`, returning it: the last record takes its place in the array.
    @discardableResult
    mutating func removeValue(forKey path: String) -> EntryRecord? {
        guard !slots.isEmpty else { return nil }
        let (slot, found) = find(path)
        guard let position = found else { return nil }
        removeSlot(slot)
        removalGeneration = Self.nextGeneration()
        let removed = storage[position]
        let last = storage.removeLast()
        if position < storage.count {
            storage[position] = last
            // The moved record's slot now holds a position past the end: point it at its new place.
            let mask = slots.count - 1
            var probe = Self.hash(last.pathPart) & mask
            while slots[probe] != Int32(storage.count + 1) { probe = (probe + 1) & mask }
            slots[probe] = Int32(position + 1)
        }
        return removed
    }

    /// Empties `slot`, moving later records of its probe run back so that none is cut off from
    /// its home slot (backward-shift deletion, no tombstones).
    private mutating func removeSlot(_ slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            let home = Self.hash(storage[Int(slots[next]) - 1].pathPart) & mask
            // It may move into the hole if the hole lies between its home slot and where it is.
            if (next - home) & mask >= (next - hole) & mask {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    mutating func reserveCapacity(_ count: Int) {
        storage.reserveCapacity(count)
        var capacity = Swift.max(16, slots.count)
        while capacity < count * 2 { capacity *= 2 }
        if capacity > slots.count { rehash(capacity: capacity) }
    }

    /// The paths, in the array's order.
    var keys: some Collection<String> { storage.lazy.map(\.relativePath) }
    var values: ContiguousArray<EntryRecord> { storage }
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
}
