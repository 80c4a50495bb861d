import Foundation

/// What changed in an index at once: the documents added, removed, changed and moved.
public struct IndexBatch: Sendable {
    /// What a batch is.
    public enum Kind: Sendable, Hashable {
        /// The first batch of ``DocumentIndex/updates()``: every entry, in ``IndexBatch/added``.
        case gathered
        /// Changes since the previous batch.
        case update
        /// The index was rebuilt or rescanned: ``IndexBatch/added`` holds every entry now; forget the earlier ones.
        case reset
    }

    /// The index the batch belongs to (a new one after a rebuild).
    public var indexID: UUID
    /// The batch's number in the index, increasing by one per batch that changes something.
    public var sequence: UInt64
    /// What the batch is.
    public var kind: Kind
    /// Documents that appeared.
    public var added: [IndexEntry]
    /// Documents that are gone, as they were.
    public var removed: [IndexEntry]
    /// Documents whose manifest or state changed, as they are now.
    public var changed: [IndexEntry]
    /// Documents that moved (recognised by document identifier).
    public var moved: [IndexMove]

    /// Makes a batch.
    public init(
        indexID: UUID, sequence: UInt64, kind: Kind, added: [IndexEntry] = [], removed: [IndexEntry] = [],
        changed: [IndexEntry] = [], moved: [IndexMove] = []
    ) {
        self.indexID = indexID
        self.sequence = sequence
        self.kind = kind
        self.added = added
        self.removed = removed
        self.changed = changed
        self.moved = moved
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty && moved.isEmpty }
}
