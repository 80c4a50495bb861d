/// The records of an index by relative path: one contiguous array of records and a dictionary
/// of positions, so that 100,000 records cost their own size and not a hash table of them.
struct RecordTable: Sendable {
    private var positions: [String: Int32] = [:]
    private var storage: ContiguousArray<EntryRecord> = []

    init() {}

    /// A table of `records`; of two with the same path, the first is kept.
    init(_ records: some Collection<EntryRecord>) {
        positions.reserveCapacity(records.count)
        storage.reserveCapacity(records.count)
        for record in records where positions[record.relativePath] == nil {
            positions[record.relativePath] = Int32(storage.count)
            storage.append(record)
        }
    }

    /// The record at `path`; setting nil removes it.
    subscript(path: String) -> EntryRecord? {
        get { positions[path].map { storage[Int($0)] } }
        set {
            guard let newValue else { _ = removeValue(forKey: path); return }
            if let position = positions[path] {
                storage[Int(position)] = newValue
            } else {
                positions[path] = Int32(storage.count)
                storage.append(newValue)
            }
        }
    }

    /// Adds `record` unless a record at its path is there already (one hash lookup, no copy out).
    mutating func insertIfAbsent(_ record: EntryRecord) {
        if let kept = positions.updateValue(Int32(storage.count), forKey: record.relativePath) {
            positions[record.relativePath] = kept  // a duplicate path (rare): the first record stays
            return
        }
        storage.append(record)
    }

    /// ``EntryRecord/isUnchanged(package:manifest:conflictIdentifiers:)`` of the record at `path`
    /// (false if there is none), looked at in place: a refresh asks it of every entry.
    func isUnchanged(_ path: String, _ stamps: PackageStamps, conflictIdentifiers: Set<CompactIdentifier>) -> Bool {
        guard let position = positions[path] else { return false }
        return storage[Int(position)].isUnchanged(package: stamps.package, manifest: stamps.manifest, conflictIdentifiers: conflictIdentifiers)
    }

    /// Removes the record at `path` (the last record takes its place), returning it.
    @discardableResult
    mutating func removeValue(forKey path: String) -> EntryRecord? {
        guard let stored = positions.removeValue(forKey: path) else { return nil }
        let position = Int(stored)
        let removed = storage[position]
        let last = storage.removeLast()
        if position < storage.count {
            storage[position] = last
            positions[last.relativePath] = stored
        }
        return removed
    }

    /// Makes room for `count` records.
    mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        storage.reserveCapacity(count)
    }

    /// The paths, in no order.
    var keys: some Collection<String> { storage.lazy.map(\.relativePath) }
    /// The records, in no order.
    var values: ContiguousArray<EntryRecord> { storage }
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
}
