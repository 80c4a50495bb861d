import Foundation

/// Which old versions a store keeps: a staggered schedule like Syncthing's, plus a size limit.
///
/// ``versionsToRemove(from:now:)`` decides, deterministically and without side effects:
///
/// 1. Protected candidates (unresolved conflicts) are never removed and take no part in the
///    schedule: they neither keep nor displace an ordinary version. Only the size limit counts
///    their bytes.
/// 2. The newest unprotected candidate is always kept, whatever its age and size.
/// 3. A candidate dated in the future (clock skew) is always kept, and counts as age 0 when
///    later candidates are measured against it.
/// 4. A candidate older than ``maximumAge`` (strictly) is removed.
/// 5. The bands, as Syncthing's staggered versioner: a candidate of age `a` falls in the first
///    band (by increasing ``Band/until``) with `a < until`; ages past every band's `until` use the
///    last band. Within each band, walking from newest to oldest, the first candidate is kept and
///    each further one only if it is at least the band's ``Band/interval`` older than the last one
///    kept in that band. An interval of 0 (or less) keeps the whole band; no bands keeps everything.
/// 6. The size limit: while the bytes of all candidates not yet removed (protected included)
///    exceed ``maximumBytes``, the oldest remaining unprotected candidate goes, except the newest
///    one (rule 2). When only protected candidates and the newest remain, pruning stops, even
///    over the limit.
///
/// Candidates are ordered by date, then by id, so equal dates give the same answer every time.
/// Applying the schedule to what it kept, at the same `now`, removes nothing more.
public struct PruningSchedule: Sendable, Hashable, Codable {
    /// One band: versions younger than `until` (age, seconds) keep one per `interval` seconds (0 = keep all).
    public struct Band: Sendable, Hashable, Codable {
        /// The band holds versions younger than this age, in seconds (and not in an earlier band).
        public var until: TimeInterval
        /// The least gap, in seconds, between two versions the band keeps; 0 keeps them all.
        public var interval: TimeInterval

        /// A band of versions younger than `until` seconds, keeping one per `interval` seconds.
        public init(until: TimeInterval, interval: TimeInterval) {
            self.until = until
            self.interval = interval
        }
    }

    /// The bands, in any order: they are applied by increasing ``Band/until``.
    public var bands: [Band]
    /// Versions older than this are removed (nil = kept forever, subject to the bands' last interval).
    public var maximumAge: TimeInterval?
    /// The store's versions of one document may use at most this many bytes (nil = no limit); the oldest prunable go first.
    public var maximumBytes: Int64?

    /// A schedule of `bands`, removing versions older than `maximumAge` and keeping at most `maximumBytes`.
    public init(bands: [Band], maximumAge: TimeInterval? = nil, maximumBytes: Int64? = nil) {
        self.bands = bands
        self.maximumAge = maximumAge
        self.maximumBytes = maximumBytes
    }

    /// Seconds in an hour.
    private static let hour: TimeInterval = 3600
    /// Seconds in a day.
    private static let day: TimeInterval = 86_400

    /// The default: everything for the first hour, then one per hour for a day, one per day for 30 days, one per week up to 365 days; no size limit.
    public static let standard = PruningSchedule(
        bands: [
            Band(until: hour, interval: 0),
            Band(until: day, interval: hour),
            Band(until: 30 * day, interval: day),
            Band(until: 365 * day, interval: 7 * day),
        ],
        maximumAge: 365 * day,
        maximumBytes: nil
    )

    /// Keeps every version (nothing pruned).
    public static let keepAll = PruningSchedule(bands: [], maximumAge: nil, maximumBytes: nil)

    /// A candidate for pruning.
    public struct Candidate: Sendable, Hashable {
        /// Identifies the version; returned by ``PruningSchedule/versionsToRemove(from:now:)``.
        public var id: String
        /// When the version was made.
        public var date: Date
        /// The bytes the version takes in the store.
        public var bytes: Int64
        /// An unresolved conflict: never pruned, never counted as removable (its bytes still count).
        public var isProtected: Bool

        /// A candidate `id` made at `date`, taking `bytes`; protected if it is an unresolved conflict.
        public init(id: String, date: Date, bytes: Int64, isProtected: Bool = false) {
            self.id = id
            self.date = date
            self.bytes = bytes
            self.isProtected = isProtected
        }
    }

    /// The ids to remove from `candidates` at time `now`. Protected candidates are never returned.
    ///
    /// The result is ordered oldest first (by date, then id). See ``PruningSchedule`` for the rules.
    public func versionsToRemove(from candidates: [Candidate], now: Date) -> [String] {
        // Newest first; ties broken by id so the walk is deterministic.
        let ordinary = candidates.filter { !$0.isProtected }.sorted(by: Self.isNewer)
        guard !ordinary.isEmpty else { return [] }

        let orderedBands = bands.sorted { ($0.until, $0.interval) < ($1.until, $1.interval) }
        var removed = Set<Int>()  // indices into `ordinary`; 0 is the newest, always kept
        var lastKeptAge = [Int: TimeInterval]()  // band index → age of the last version kept in it
        for (index, candidate) in ordinary.enumerated() {
            let age = max(0, now.timeIntervalSince(candidate.date))  // from the future: age 0
            let isExempt = index == 0 || candidate.date > now
            if !isExempt, let maximumAge, age > maximumAge {
                removed.insert(index)
                continue
            }
            guard let band = Self.band(for: age, in: orderedBands) else { continue }
            if !isExempt, let previous = lastKeptAge[band], age - previous < orderedBands[band].interval {
                removed.insert(index)
            } else {
                lastKeptAge[band] = age
            }
        }

        if let maximumBytes {
            var total = candidates.reduce(Int64(0)) { $0 + $1.bytes }
            for index in ordinary.indices where removed.contains(index) { total -= ordinary[index].bytes }
            // Oldest first, never the newest (index 0).
            var index = ordinary.count - 1
            while total > maximumBytes, index > 0 {
                if !removed.contains(index) {
                    removed.insert(index)
                    total -= ordinary[index].bytes
                }
                index -= 1
            }
        }

        // `ordinary` is newest first, so the largest index is the oldest.
        return removed.sorted(by: >).map { ordinary[$0].id }
    }

    /// The band of a version of age `age` (≥ 0): the first with `age < until`, else the last; nil when there are none.
    private static func band(for age: TimeInterval, in bands: [Band]) -> Int? {
        guard !bands.isEmpty else { return nil }
        return bands.firstIndex { age < $0.until } ?? bands.count - 1
    }

    /// Orders candidates newest first, by date, then by id (descending).
    private static func isNewer(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        lhs.date != rhs.date ? lhs.date > rhs.date : lhs.id > rhs.id
    }
}

extension PruningSchedule {
    /// Whether the schedule could remove anything from versions of these dates, at `now`,
    /// without knowing more about them: false when there is no size limit and every date is
    /// young enough for a band that keeps everything (or nothing is ever removed). Lets a store
    /// skip reading its records.
    public func mayRemove(fromVersionsDated dates: [Date], now: Date) -> Bool {
        mayRemove(fromVersionsCount: dates.count, oldest: dates.min(), now: now)
    }

    /// ``mayRemove(fromVersionsDated:now:)`` for `count` versions of which the oldest is dated
    /// `oldest`: all it needs.
    func mayRemove(fromVersionsCount count: Int, oldest: Date?, now: Date) -> Bool {
        if maximumBytes != nil { return count > 1 }
        if bands.isEmpty && maximumAge == nil { return false }
        guard count > 1, let oldest else { return false }
        let keepAllUntil = bands.sorted { ($0.until, $0.interval) < ($1.until, $1.interval) }
            .prefix { $0.interval == 0 }.last?.until ?? 0
        let limit = min(keepAllUntil, maximumAge ?? .infinity)
        return now.timeIntervalSince(oldest) >= limit
    }
}
