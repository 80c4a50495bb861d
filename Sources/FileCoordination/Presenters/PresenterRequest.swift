import Foundation

/// What a coordinator asks the presenters of an item before its accessor runs.
struct PresenterRequest: Sendable, Equatable {
    enum Kind: String, Sendable {
        case reader, writer, deletion
        /// Something inside the presented folder (or package) will be deleted (version 2 only).
        case subitemDeletion = "subitem-deletion"

        /// How strong a request of this kind is, for merging the requests of one unit.
        var rank: Int {
            switch self {
            case .subitemDeletion: 0
            case .reader: 1
            case .writer: 2
            case .deletion: 3
            }
        }
    }

    var kind: Kind
    /// Ask for `savePresentedItemChanges()` first.
    var save: Bool
    /// The unit key (see `LockPlan.itemOffset`) whose presenters are asked.
    var unit: Int64
    /// The unit of the item at `path`: `unit` itself, except for a subitem deletion, where
    /// `unit` is an enclosing folder's. Callbacks must not coordinate it (see ``PresenterCallbackContext``).
    var itemUnit: Int64
    /// The item's path (for a subitem deletion: the item to be deleted).
    var path: String

    init(kind: Kind, save: Bool, unit: Int64, itemUnit: Int64? = nil, path: String) {
        self.kind = kind
        self.save = save
        self.unit = unit
        self.itemUnit = itemUnit ?? unit
        self.path = path
    }

    /// Version 1: `R <kind> <save 0|1> <unit> <path>`: one packet.
    var encoded: Data { Data("R \(kind.rawValue) \(save ? 1 : 0) \(unit) \(path)".utf8) }

    /// Parses a version 1 packet.
    init?(_ data: Data) {
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "R", let kind = Kind(rawValue: String(parts[1])), kind != .subitemDeletion,
            let unit = Int64(parts[3])
        else {
            return nil
        }
        self.init(kind: kind, save: parts[2] == "1", unit: unit, path: String(parts[4]))
    }
}

/// Runs presenter callbacks with a note of which item they are about, so that a coordination of
/// that item started from inside one is refused instead of deadlocking.
enum PresenterCallbackContext {
    @TaskLocal static var units: Set<Int64> = []
}
