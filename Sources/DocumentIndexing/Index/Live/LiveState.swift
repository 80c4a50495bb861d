import FileCoordination
import Synchronization

/// The events the watcher delivered and the index has not looked at yet.
final class EventInbox: Sendable {
    struct Pending: Sendable {
        var events: [FileWatcher.Event] = []
        var overflowed = false
    }

    let pending = Mutex(Pending())
    /// When the watcher last delivered events.
    let lastArrival = Mutex(ContinuousClock.now)

    func add(_ events: [FileWatcher.Event], overflowed: Bool) {
        pending.withLock {
            $0.events += events
            $0.overflowed = $0.overflowed || overflowed
        }
        lastArrival.withLock { $0 = .now }
    }

    /// How long ago the watcher last delivered events.
    func sinceLastArrival() -> Duration { ContinuousClock.now - lastArrival.withLock { $0 } }

    func take() -> Pending { pending.withLock { state in defer { state = Pending() } ; return state } }
}

/// What a live index holds besides its entries: the one watcher of the tree and what it watches.
struct LiveState: Sendable {
    let watcher: FileWatcher
    let inbox: EventInbox
    /// The library's non-package folders being watched (relative paths; "" is the library).
    var watchedFolders: Set<String> = []
    /// The package folders being watched (within ``DocumentIndex/Configuration/packageWatchBudget``).
    var watchedPackages: Set<String> = []
    /// The records' removal generation (``RecordTable/removalGeneration``) when the watched
    /// packages were last checked for one the snapshot no longer has.
    var watchesCheckedAtRemoval: UInt64?
    /// Whether a flush of the inbox is scheduled.
    var flushScheduled = false
    /// The periodic stat sweep.
    var sweep: Task<Void, Never>?
    /// How long to wait before the next rescan after a queue overflow.
    var overflowBackoff: Duration = .milliseconds(50)
    /// The budget ran out: some packages are checked by the sweep only.
    var isDegraded = false
    /// For tests: events are left in the inbox (see ``DocumentIndex/holdEvents(_:)``).
    var isHeld = false
    /// Packages an event showed mid-change (a `cp -r` or `rm -rf` under way, a sync engine
    /// delivering members): their state is published once it settles (see ``DocumentIndex/holdUnsettled(_:looked:previous:)``).
    var unsettled: [String: Unsettled] = [:]
    /// The look at the unsettled packages, when one is scheduled.
    var settleCheck: Task<Void, Never>?
}

/// When a package was first seen mid-change, and when an event last named it.
struct Unsettled: Sendable {
    var firstSeen: ContinuousClock.Instant
    var lastEvent: ContinuousClock.Instant
}
