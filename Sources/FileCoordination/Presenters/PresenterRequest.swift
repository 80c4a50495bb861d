import Foundation

/// What a coordinator asks the presenters of an item before its accessor runs.
struct PresenterRequest: Sendable, Equatable {
    enum Kind: String, Sendable {
        case reader, writer, deletion
    }

    var kind: Kind
    /// Ask for `savePresentedItemChanges()` first.
    var save: Bool
    /// The unit key (see `LockPlan.itemOffset`) of the item.
    var unit: Int64
    /// The item's path, for messages.
    var path: String

    /// `R <kind> <save 0|1> <unit> <path>`: one packet.
    var encoded: Data { Data("R \(kind.rawValue) \(save ? 1 : 0) \(unit) \(path)".utf8) }

    init(kind: Kind, save: Bool, unit: Int64, path: String) {
        self.kind = kind
        self.save = save
        self.unit = unit
        self.path = path
    }

    init?(_ data: Data) {
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "R", let kind = Kind(rawValue: String(parts[1])), let unit = Int64(parts[3]) else {
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
