import Synchronization

/// The byte-range locks one coordination takes, in the order it takes them.
///
/// Every key owns two bytes of the lock file: the *item* byte (offset `2k`), shared for reading
/// and exclusive for writing the unit, and the *subtree* byte (offset `2k + 1`), shared by every
/// coordination of anything below a folder, exclusive for deleting, moving or replacing it.
/// Locks are always taken in increasing offset order, so two coordinations can never wait for
/// each other in a cycle.
struct LockPlan: Sendable, Equatable {
    enum Mode: Int, Sendable, Comparable {
        case shared = 1, exclusive = 2
        static func < (a: Mode, b: Mode) -> Bool { a.rawValue < b.rawValue }
    }

    struct Lock: Sendable, Hashable {
        let offset: Int64
        var mode: Mode
        /// What it is for (for messages).
        let purpose: Purpose
        /// The coordination holding it, once taken: a lock covers a nested coordination only
        /// while it is held, and only in its own namespace.
        var holder: Holder? = nil
    }

    /// What a lock is for, described only when a message needs it (building the words for every
    /// lock would cost more than the locking).
    struct Purpose: Sendable, Hashable, CustomStringConvertible {
        enum Kind: Sendable, Hashable { case inside, unit, everythingInside }
        let itemPath: String
        /// How many path components (from the root) name the folder or unit concerned.
        let depth: Int
        let kind: Kind

        var description: String {
            let path = ItemPath.prefix(of: itemPath, components: depth)
            switch kind {
            case .inside: return "inside \(path)"
            case .unit: return path
            case .everythingInside: return "everything inside \(path)"
            }
        }
    }

    /// A lock file, by (device, inode): two namespace objects on one folder share it.
    struct LockFile: Sendable, Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// One coordination's hold on its locks, ended when it releases them (a task started inside
    /// an accessor inherits the list of its locks, and may outlive them).
    final class Holder: Sendable, Hashable {
        let lockFile: LockFile
        private let live = Atomic(true)

        init(lockFile: LockFile) { self.lockFile = lockFile }

        var isLive: Bool { live.load(ordering: .acquiring) }
        func end() { live.store(false, ordering: .releasing) }

        static func == (a: Holder, b: Holder) -> Bool { a === b }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    private(set) var locks: [Lock] = []

    /// Offsets are 2 × (key mod 2⁶⁰): far below the largest offset `fcntl` accepts.
    static func itemOffset(_ key: UInt64) -> Int64 { Int64(key & ((1 << 60) - 1)) * 2 }

    /// Adds what access of `kind` to `item` needs.
    mutating func add(_ item: ItemPath, writing: Bool, scopesSubtree: Bool) {
        let unit = item.lockUnitIndex
        locks.reserveCapacity(locks.count + unit + 2)
        // Every folder above the unit: shared subtree lock (delete/move/replace of it waits for us).
        for index in 0..<unit {
            let key = item.components[index].key
            insert(Lock(offset: Self.itemOffset(key) + 1, mode: .shared, purpose: Purpose(itemPath: item.path, depth: index + 1, kind: .inside)))
        }
        let key = item.components[unit].key
        insert(Lock(
            offset: Self.itemOffset(key), mode: writing ? .exclusive : .shared,
            purpose: Purpose(itemPath: item.path, depth: unit + 1, kind: .unit)))
        // Deleting, moving or replacing a folder waits for, and blocks, everything inside it.
        if writing && scopesSubtree {
            insert(Lock(
                offset: Self.itemOffset(key) + 1, mode: .exclusive,
                purpose: Purpose(itemPath: item.path, depth: unit + 1, kind: .everythingInside)))
        }
    }

    private mutating func insert(_ lock: Lock) {
        if let index = locks.firstIndex(where: { $0.offset == lock.offset }) {
            if locks[index].mode < lock.mode { locks[index].mode = lock.mode }
            return
        }
        let position = locks.firstIndex(where: { $0.offset > lock.offset }) ?? locks.count
        locks.insert(lock, at: position)
    }

    /// Whether `held` already covers every lock of this plan (same offsets, at least as strong).
    func isCovered(by held: [Lock]) -> Bool {
        locks.allSatisfy { lock in held.contains { $0.offset == lock.offset && $0.mode >= lock.mode } }
    }
}
