import Foundation

/// What pruning needs of a document folder's versions: how many there are and the date of the
/// oldest. An id starts with its date (`YYYYMMDDTHHMMSSZ`), so the least id is the oldest: a save
/// of a note with thousands of versions compares their names once and decodes one date.
struct VersionNames: Sendable, Equatable {
    /// How many versions.
    private(set) var count = 0
    /// The least id.
    private(set) var oldest: String?
    /// The oldest date where every id's was decoded (``init(_:decodingEvery:)``).
    private var decodedOldest: Date?

    init() {}

    /// `count` versions, the least id `oldest`.
    init(count: Int, oldest: String?) {
        self.count = count
        self.oldest = oldest
    }

    /// The version ids among `names` (other names are left out); with `decodingEvery`, each id's
    /// date is decoded and the oldest that can be read is kept, whatever the least id's is.
    init(_ names: [String], decodingEvery: Bool = false) {
        for name in names where VersionIdentifier.isValid(name) {
            add(name)
            if decodingEvery, let date = VersionIdentifier.date(of: name) { decodedOldest = min(decodedOldest ?? date, date) }
        }
    }

    /// Counts the version `id` (a valid version id).
    mutating func add(_ id: String) {
        count += 1
        if oldest.map({ id < $0 }) ?? true { oldest = id }
    }

    /// These and the version `id`.
    func adding(_ id: String) -> VersionNames {
        var names = self
        names.add(id)
        return names
    }

    /// The oldest version's date; nil when there is none, or the least id's date can't be read.
    var oldestDate: Date? { decodedOldest ?? oldest.flatMap(VersionIdentifier.date(of:)) }
}
