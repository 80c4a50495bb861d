import Foundation

extension DocumentIndex {
    /// How long no event must have named a package that reads incomplete or damaged before
    /// that state is published: a shell's `cp -r` or `rm -rf`, or a sync engine delivering
    /// members one by one, shows a package mid-change for as long as it works.
    static let settlePeriod: Duration = .milliseconds(200)
    /// The longest a package's state is held back while events keep naming it.
    static let longestSettle: Duration = .seconds(2)

    /// Takes out of `changes` the packages an event found mid-change (incomplete or damaged,
    /// named by an event less than ``settlePeriod`` ago, first seen so less than
    /// ``longestSettle`` ago): the index keeps what it knew of them (`previous`, nothing for a
    /// new one) and looks again once they settle. A removal in progress is then published as a
    /// removal of the document it was, and a copy in progress as the document it becomes.
    ///
    /// A new package held back marks its folder to be listed again, so that a process that
    /// stops before the second look still finds it at its next refresh.
    func holdUnsettled(_ changes: inout IndexSnapshot.Changes, looked packages: Set<String>, previous: [String: EntryRecord]) {
        let now = ContinuousClock.now
        var held = Set<String>()
        for record in changes.added where mayHold(record, now: now) {
            held.insert(record.relativePath)
            snapshot.records[record.relativePath] = nil
            snapshot.markUnlisted(parentPath(of: record.relativePath), into: &changes)
        }
        for record in changes.changed {
            guard let old = previous[record.relativePath], mayHold(record, now: now) else { continue }
            held.insert(record.relativePath)
            snapshot.records[record.relativePath] = old
        }
        changes.withdraw(held)
        // What was looked at and not held back has settled (published, or gone, or as it was).
        let looked = packages.union((changes.added + changes.changed + changes.removed).map(\.relativePath))
        for path in looked where !held.contains(path) { live?.unsettled[path] = nil }
        scheduleSettleCheck()
    }

    /// Whether `record`, just read, is held back (and marked so when first seen mid-change).
    private func mayHold(_ record: EntryRecord, now: ContinuousClock.Instant) -> Bool {
        switch record.state {
        case .incomplete, .damaged: break
        case .current, .unresolvedConflicts, .tooNew: return false
        }
        let path = record.relativePath
        let mark = live?.unsettled[path] ?? Unsettled(firstSeen: now, lastEvent: now)
        guard now - mark.lastEvent < Self.settlePeriod, now - mark.firstSeen < Self.longestSettle else { return false }
        live?.unsettled[path] = mark
        return true
    }

    /// An event named `paths` now: those held back stay so until ``settlePeriod`` after it.
    func noteEvents(in paths: Set<String>) {
        guard let unsettled = live?.unsettled, !unsettled.isEmpty else { return }
        let now = ContinuousClock.now
        for path in paths where unsettled[path] != nil { live?.unsettled[path]?.lastEvent = now }
    }

    /// The packages held back, forgotten: a look that publishes whatever it finds (a sweep, a
    /// sync, an overflow) checks them.
    func takeUnsettled() -> Set<String> {
        guard let unsettled = live?.unsettled, !unsettled.isEmpty else { return [] }
        live?.unsettled = [:]
        return Set(unsettled.keys)
    }

    /// Schedules a look at the held-back packages for when the first of them is due.
    private func scheduleSettleCheck() {
        guard let state = live, state.settleCheck == nil else { return }
        let due = state.unsettled.values.map { min($0.lastEvent + Self.settlePeriod, $0.firstSeen + Self.longestSettle) }.min()
        guard let due else { return }
        live?.settleCheck = Task { [weak self] in
            try? await Task.sleep(until: due, tolerance: .milliseconds(5))
            guard !Task.isCancelled else { return }
            await self?.settleCheckDue()
        }
    }

    private func settleCheckDue() {
        live?.settleCheck = nil
        guard let paths = live?.unsettled.keys, !paths.isEmpty else { return }
        applyLiveChanges(packages: Set(paths), settling: true)
    }
}
