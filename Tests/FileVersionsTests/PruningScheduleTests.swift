import DocumentKitTesting
import FileVersions
import Foundation
import Testing

@Suite struct PruningScheduleTests {
    /// The time every test prunes at.
    static let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let hour: TimeInterval = 3600
    static let day: TimeInterval = 86_400

    /// A candidate `age` seconds old (negative: in the future), named after its age unless `id` is given.
    static func version(
        age: TimeInterval, id: String? = nil, bytes: Int64 = 1, isProtected: Bool = false
    ) -> PruningSchedule.Candidate {
        PruningSchedule.Candidate(
            id: id ?? "age-\(Int(age))", date: now.addingTimeInterval(-age), bytes: bytes, isProtected: isProtected)
    }

    /// The ages (as ids `age-N`) the schedule removes from versions of `ages`.
    static func removedAges(_ schedule: PruningSchedule, _ ages: [TimeInterval]) -> [String] {
        schedule.versionsToRemove(from: ages.map { version(age: $0) }, now: now)
    }

    // MARK: Basics

    @Test func emptyInputRemovesNothing() {
        #expect(PruningSchedule.standard.versionsToRemove(from: [], now: Self.now).isEmpty)
        #expect(PruningSchedule(bands: [], maximumAge: 1, maximumBytes: 0).versionsToRemove(from: [], now: Self.now).isEmpty)
    }

    @Test func keepAllRemovesNothingWhateverTheAges() {
        let ages = (0..<500).map { TimeInterval($0) * 7 * Self.day / 3 }
        #expect(Self.removedAges(.keepAll, ages).isEmpty)
    }

    @Test func standardIsEveryVersionForAnHourThenHourlyDailyWeeklyUpToAYear() {
        let standard = PruningSchedule.standard
        #expect(standard.bands == [
            .init(until: Self.hour, interval: 0),
            .init(until: Self.day, interval: Self.hour),
            .init(until: 30 * Self.day, interval: Self.day),
            .init(until: 365 * Self.day, interval: 7 * Self.day),
        ])
        #expect(standard.maximumAge == 365 * Self.day)
        #expect(standard.maximumBytes == nil)
    }

    @Test func schedulesRoundTripThroughJSON() throws {
        let schedule = PruningSchedule(bands: [.init(until: 60, interval: 5)], maximumAge: 600, maximumBytes: 1 << 20)
        for original in [schedule, .standard, .keepAll] {
            let decoded = try JSONDecoder().decode(PruningSchedule.self, from: JSONEncoder().encode(original))
            #expect(decoded == original)
        }
    }

    // MARK: Band boundaries

    /// Everything for 100 s, then one per 100 s; nothing older than 2000 s.
    static let twoBands = PruningSchedule(
        bands: [.init(until: 100, interval: 0), .init(until: 1000, interval: 100)], maximumAge: 2000)

    @Test func aBandWithIntervalZeroKeepsEverything() {
        #expect(Self.removedAges(Self.twoBands, [0, 1, 1, 2, 50, 98, 99]).isEmpty)
    }

    @Test func aVersionAgedExactlyABandsUntilBelongsToTheNextBand() {
        // 99 is in the keep-all band; 100 opens the second band (kept as its first), 150 is too close to it.
        #expect(Self.removedAges(Self.twoBands, [0, 99, 100, 150]) == ["age-150"])
    }

    @Test func aGapOfExactlyTheIntervalIsKeptAndAShorterOneIsNot() {
        #expect(Self.removedAges(Self.twoBands, [0, 100, 199, 200, 299.5, 300]) == ["age-299", "age-199"])
    }

    @Test func eachBandMeasuresGapsFromItsOwnLastKeptVersion() {
        // 100 is kept although only 1 s older than 99: it is the first of its band.
        #expect(Self.removedAges(Self.twoBands, [0, 99, 100, 101]) == ["age-101"])
    }

    @Test func agesPastTheLastBandUseItsInterval() {
        #expect(Self.removedAges(Self.twoBands, [0, 900, 1000, 1050, 1100, 1500, 1550]) == ["age-1550", "age-1050"])
    }

    @Test func versionsOlderThanMaximumAgeAreRemovedAndOneExactlyThatOldIsKept() {
        #expect(Self.removedAges(Self.twoBands, [0, 2000, 2001, 5000]) == ["age-5000", "age-2001"])
    }

    @Test func bandsApplyByIncreasingUntilWhateverTheirOrder() {
        let shuffled = PruningSchedule(bands: Self.twoBands.bands.reversed(), maximumAge: 2000)
        let ages: [TimeInterval] = [0, 10, 99, 100, 150, 200, 1000, 1050, 2001]
        #expect(Self.removedAges(shuffled, ages) == Self.removedAges(Self.twoBands, ages))
    }

    @Test func withoutMaximumAgeOldVersionsKeepOnePerLastInterval() {
        let schedule = PruningSchedule(bands: [.init(until: 10, interval: 0), .init(until: 20, interval: 1000)])
        #expect(Self.removedAges(schedule, [0, 10, 500, 1010, 1_000_000, 1_000_500]) == ["age-1000500", "age-500"])
    }

    // MARK: The standard schedule over a long history

    @Test func standardKeepsTheExpectedCountPerBandOfFortyDaysOfVersionsEveryFiveMinutes() {
        let ages = (0..<(40 * 288)).map { TimeInterval($0) * 300 }
        let removed = Set(Self.removedAges(.standard, ages))
        let kept = ages.filter { !removed.contains("age-\(Int($0))") }
        #expect(removed.count + kept.count == 11_520)
        // All 12 of the first hour; 1 h, 2 h, … 23 h; 1 d … 29 d; 30 d and 37 d.
        #expect(kept.filter { $0 < Self.hour }.count == 12)
        #expect(kept.filter { $0 >= Self.hour && $0 < Self.day } == (1...23).map { TimeInterval($0) * Self.hour })
        #expect(kept.filter { $0 >= Self.day && $0 < 30 * Self.day } == (1...29).map { TimeInterval($0) * Self.day })
        #expect(kept.filter { $0 >= 30 * Self.day } == [30 * Self.day, 37 * Self.day])
        #expect(kept.count == 66)
    }

    @Test func standardRemovesEverythingOlderThanAYearButTheNewest() {
        let ages = (0..<400).map { TimeInterval($0) * Self.day + 1 }
        let removed = Set(Self.removedAges(.standard, ages))
        let keptPastAYear = ages.filter { $0 > 365 * Self.day && !removed.contains("age-\(Int($0))") }
        #expect(keptPastAYear.isEmpty)
        // The newest alone, 400 days old, is kept.
        #expect(Self.removedAges(.standard, [400 * Self.day]).isEmpty)
    }

    // MARK: Newest, future dates, protected versions

    @Test func theNewestVersionIsAlwaysKeptEvenPastMaximumAgeAndOverTheSizeLimit() {
        let schedule = PruningSchedule(bands: [], maximumAge: 10, maximumBytes: 5)
        let candidates = [Self.version(age: 100, bytes: 50), Self.version(age: 200, bytes: 50)]
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-200"])
    }

    @Test func versionsDatedInTheFutureAreKeptAndCountAsAgeZero() {
        let schedule = PruningSchedule(bands: [.init(until: 1000, interval: 100)], maximumAge: 1)
        let candidates = [
            Self.version(age: -500, id: "future-500"), Self.version(age: -10, id: "future-10"),
            Self.version(age: -10, id: "future-10b"), Self.version(age: 0, id: "now"), Self.version(age: 50),
        ]
        // The future ones are measured at age 0: "now" and age 50 are closer than 100 s to them.
        // (Age 50 is past the maximum age anyway.)
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-50", "now"])
    }

    @Test func protectedVersionsAreNeverRemovedPastMaximumAgeOrTheSizeLimit() {
        let schedule = PruningSchedule(bands: [.init(until: 10, interval: 5)], maximumAge: 10, maximumBytes: 10)
        let candidates = [
            Self.version(age: 0, bytes: 1),
            Self.version(age: 1, id: "conflict-1", bytes: 100, isProtected: true),
            Self.version(age: 2, bytes: 1),
            Self.version(age: 10_000, id: "conflict-old", bytes: 100, isProtected: true),
            Self.version(age: 20_000, bytes: 1),
        ]
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-20000", "age-2"])
    }

    @Test func protectedVersionsDoNotStandInForOrdinaryOnesInTheBands() {
        let schedule = PruningSchedule(bands: [.init(until: 1000, interval: 100)])
        let candidates = [
            Self.version(age: 0), Self.version(age: 100, id: "conflict", isProtected: true), Self.version(age: 150),
        ]
        // 150 is measured against 0, not against the protected version at 100.
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now).isEmpty)
    }

    // MARK: The size limit

    @Test func theSizeLimitRemovesTheOldestUntilTheTotalFits() {
        let schedule = PruningSchedule(bands: [], maximumBytes: 100)
        let candidates = [0, 10, 20, 30, 40].map { Self.version(age: TimeInterval($0), bytes: 30) }
        // 150 bytes: removing 40 and 30 leaves 90.
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-40", "age-30"])
    }

    @Test func theSizeLimitCountsProtectedBytesButSkipsProtectedVersions() {
        let schedule = PruningSchedule(bands: [], maximumBytes: 100)
        let candidates = [
            Self.version(age: 0, bytes: 10), Self.version(age: 10, bytes: 10),
            Self.version(age: 20, id: "conflict", bytes: 80, isProtected: true), Self.version(age: 30, bytes: 10),
        ]
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-30"])
    }

    @Test func theSizeLimitStopsWhenOnlyProtectedVersionsAndTheNewestRemain() {
        let schedule = PruningSchedule(bands: [], maximumBytes: 10)
        let candidates = [
            Self.version(age: 0, bytes: 5), Self.version(age: 10, bytes: 5),
            Self.version(age: 20, id: "conflict", bytes: 500, isProtected: true), Self.version(age: 30, bytes: 5),
        ]
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-30", "age-10"])
    }

    @Test func theSizeLimitCountsOnlyWhatTheBandsKept() {
        let schedule = PruningSchedule(bands: [.init(until: 1000, interval: 100)], maximumBytes: 60)
        let candidates = [0, 50, 100, 200].map { Self.version(age: TimeInterval($0), bytes: 20) }
        // The band removes 50; 0, 100, 200 make 60 bytes, which fits.
        #expect(schedule.versionsToRemove(from: candidates, now: Self.now) == ["age-50"])
    }

    // MARK: Order and determinism

    @Test func theResultIsOldestFirstAndTheSameForAnyInputOrder() {
        let schedule = PruningSchedule(bands: [.init(until: 1000, interval: 100)])
        let candidates = [
            Self.version(age: 0), Self.version(age: 30), Self.version(age: 60, id: "b"), Self.version(age: 60, id: "a"),
            Self.version(age: 60, id: "c"), Self.version(age: 120),
        ]
        // Among equal dates the larger id counts as newer.
        let expected = ["a", "b", "c", "age-30"]
        var generator = SeededRandom(seed: 7)
        for _ in 0..<20 {
            #expect(schedule.versionsToRemove(from: candidates.shuffled(using: &generator), now: Self.now) == expected)
        }
    }

    // MARK: Properties over random histories

    @Test(arguments: 0..<8)
    func randomHistoriesNeverLoseProtectedVersionsAndPruningIsIdempotent(seed: UInt64) {
        var random = SeededRandom(seed: 0x5EED_0000 + seed)
        var removedCount = 0
        for _ in 0..<150 {
            let schedule = Self.randomSchedule(&random)
            let candidates = Self.randomHistory(&random)
            let removed = schedule.versionsToRemove(from: candidates, now: Self.now)
            removedCount += removed.count
            let byID = Dictionary(uniqueKeysWithValues: candidates.map { ($0.id, $0) })

            #expect(Set(removed).count == removed.count, "no id twice")
            #expect(removed.allSatisfy { byID[$0] != nil }, "only ids of the input")
            #expect(removed.allSatisfy { byID[$0]?.isProtected == false }, "never a protected version")
            let dates = removed.compactMap { byID[$0]?.date }
            #expect(dates == dates.sorted(), "oldest first")
            if let newest = candidates.filter({ !$0.isProtected }).max(by: { ($0.date, $0.id) < ($1.date, $1.id) }) {
                #expect(!removed.contains(newest.id), "the newest is kept")
            }

            let gone = Set(removed)
            let kept = candidates.filter { !gone.contains($0.id) }
            #expect(schedule.versionsToRemove(from: kept.shuffled(using: &random), now: Self.now).isEmpty, "idempotent")
        }
        #expect(removedCount > 100, "the histories exercise pruning")
    }

    /// A schedule of 0–3 random bands, maybe a maximum age, maybe a size limit.
    static func randomSchedule(_ random: inout SeededRandom) -> PruningSchedule {
        if random.next(upTo: 5) == 0 { return .standard }
        let bands = (0..<random.next(upTo: 4)).map { _ in
            PruningSchedule.Band(
                until: TimeInterval(random.next(upTo: 40 * 86_400)), interval: TimeInterval(random.next(upTo: 3 * 86_400)))
        }
        let maximumAge = random.next(upTo: 2) == 0 ? nil : TimeInterval(random.next(upTo: 60 * 86_400))
        let maximumBytes = random.next(upTo: 2) == 0 ? nil : Int64(random.next(upTo: 20_000))
        return PruningSchedule(bands: bands, maximumAge: maximumAge, maximumBytes: maximumBytes)
    }

    /// 0–80 versions from 60 days ago to a day in the future, some sharing a date, some protected.
    static func randomHistory(_ random: inout SeededRandom) -> [PruningSchedule.Candidate] {
        var dates: [TimeInterval] = []
        return (0..<random.next(upTo: 81)).map { index in
            let age: TimeInterval
            if !dates.isEmpty, random.next(upTo: 10) == 0 {
                age = dates[Int(random.next(upTo: UInt64(dates.count)))]
            } else {
                age = TimeInterval(random.next(upTo: 61 * 86_400)) - 86_400
            }
            dates.append(age)
            return version(
                age: age, id: "v\(index)", bytes: Int64(random.next(upTo: 1000)), isProtected: random.next(upTo: 8) == 0)
        }
    }
}

extension SeededRandom {
    /// A number in `0..<bound` (bound > 0).
    mutating func next(upTo bound: UInt64) -> UInt64 { next() % bound }

    /// A number in `0..<bound` (bound > 0) as an Int.
    mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// The shortcut a store takes before reading its records.
@Suite struct PruningShortcutTests {
    let now = Date(timeIntervalSince1970: 2_000_000_000)

    @Test func versionsAllInsideTheKeepEverythingBandCanBeLeftWithoutReadingThem() {
        let dates = (0..<100).map { now.addingTimeInterval(-Double($0) * 30) }  // the last 50 minutes
        #expect(!PruningSchedule.standard.mayRemove(fromVersionsDated: dates, now: now))
        #expect(PruningSchedule.standard.mayRemove(fromVersionsDated: dates + [now.addingTimeInterval(-3601)], now: now))
    }

    @Test func keepAllNeverRemovesAndASizeLimitAlwaysMight() {
        let dates = [now, now.addingTimeInterval(-1e7)]
        #expect(!PruningSchedule.keepAll.mayRemove(fromVersionsDated: dates, now: now))
        #expect(PruningSchedule(bands: [], maximumBytes: 10).mayRemove(fromVersionsDated: dates, now: now))
        #expect(!PruningSchedule.standard.mayRemove(fromVersionsDated: [now.addingTimeInterval(-1e7)], now: now))
    }

    @Test func theShortcutNeverHidesARemovalTheScheduleWouldMake() {
        var random = SeededRandom(seed: 77)
        for _ in 0..<300 {
            let count = Int(random.next() % 30) + 1
            let candidates = (0..<count).map { index in
                PruningSchedule.Candidate(id: "v\(index)", date: now.addingTimeInterval(-Double(random.next() % 400_000)), bytes: 0)
            }
            for schedule in [PruningSchedule.standard, .keepAll, PruningSchedule(bands: [.init(until: 600, interval: 0), .init(until: 86_400, interval: 3600)], maximumAge: 50_000)] {
                if !schedule.versionsToRemove(from: candidates, now: now).isEmpty {
                    #expect(schedule.mayRemove(fromVersionsDated: candidates.map(\.date), now: now))
                }
            }
        }
    }
}
