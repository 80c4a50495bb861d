#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation

/// Coordinates reads and writes of files and packages across threads and processes, as
/// `NSFileCoordinator` does on Apple platforms.
///
/// - Readers share; a writer excludes readers and writers of the same item.
/// - A package is one unit: access to anything inside it is access to the package.
/// - A plain folder is a lock scope only for deleting, moving and replacing it
///   (``CoordinatedWritingOptions/forDeleting``, `forMoving`, `forReplacing`), which wait for
///   earlier coordinations of anything inside it and make later ones wait.
/// - An item is identified by the file system, not the string: symbolic links on the way, `.`,
///   `..`, repeated and trailing slashes, and letter case in case-insensitive folders all lead to
///   the same item.
/// - The locks are held by the kernel on a file that saves never replace (see
///   ``CoordinationNamespace``): a process that dies, even by `SIGKILL`, releases all of them.
///
/// ## Nested coordination
/// A coordination started inside another's accessor, in the same task or thread, runs at once
/// if the outer one already holds what it needs (locks of another namespace cover nothing, nor
/// locks already released: a task started inside an accessor may outlive it).
/// If it needs more, it takes it only if it is free: it never waits (waiting while holding
/// locks out of order could deadlock with another process), and fails with
/// ``/DocumentKitSystem/DocumentKitError/Code/busy`` instead. Coordinate every item of one
/// operation in one call (``coordinate(with:timeout:byAccessor:)`` or the two-item forms).
public struct FileCoordinator: Sendable {
    /// The namespace shared with the other processes.
    public let namespace: CoordinationNamespace
    /// The presenter this coordinator works for: it is not asked about its own coordinations.
    public let presenter: PresenterRegistration?
    /// How long the presenters of another process may take to answer. A process that misses it
    /// (stopped, hung, too slow) is marked unresponsive in the namespace and the coordination
    /// goes on without it; every coordinator then skips it at once until it answers again, and
    /// its presenters hear that their items changed (see "Unresponsive presenters" in the
    /// coordination article). Presenters in this process are waited for.
    public let presenterTimeout: Duration

    /// A coordinator in `namespace`, working for `presenter` (if any).
    public init(namespace: CoordinationNamespace, presenter: PresenterRegistration? = nil, presenterTimeout: Duration = .seconds(5)) {
        self.namespace = namespace
        self.presenter = presenter
        self.presenterTimeout = presenterTimeout
    }

    @TaskLocal static var heldByEnclosingCoordination: [LockPlan.Lock] = []

    // MARK: Blocking forms

    /// Reads the item at `url` under coordination; `accessor` gets the item's resolved URL.
    ///
    /// - Parameters:
    ///   - url: The item to read.
    ///   - options: How to read it (see ``CoordinatedReadingOptions``).
    ///   - timeout: How long to wait at most (nil: until access is granted).
    ///   - accessor: Reads the item, at the URL it gets.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` (`busy` when the wait timed out or a nested coordination
    ///   would have to wait), or what `accessor` throws.
    public func coordinate<T>(
        readingItemAt url: URL, options: CoordinatedReadingOptions = [], timeout: Duration? = nil,
        byAccessor accessor: (URL) throws -> T
    ) throws -> T {
        try coordinateBlocking([.readingIntent(with: url, options: options)], timeout: timeout) { try accessor($0[0].url) }
    }

    /// Writes the item at `url` under coordination.
    public func coordinate<T>(
        writingItemAt url: URL, options: CoordinatedWritingOptions = [], timeout: Duration? = nil,
        byAccessor accessor: (URL) throws -> T
    ) throws -> T {
        try coordinateBlocking([.writingIntent(with: url, options: options)], timeout: timeout) { try accessor($0[0].url) }
    }

    /// Reads one item and writes another in one coordination (a copy, say).
    public func coordinate<T>(
        readingItemAt readURL: URL, options readOptions: CoordinatedReadingOptions = [],
        writingItemAt writeURL: URL, options writeOptions: CoordinatedWritingOptions = [], timeout: Duration? = nil,
        byAccessor accessor: (URL, URL) throws -> T
    ) throws -> T {
        try coordinateBlocking(
            [.readingIntent(with: readURL, options: readOptions), .writingIntent(with: writeURL, options: writeOptions)],
            timeout: timeout
        ) { try accessor($0[0].url, $0[1].url) }
    }

    /// Writes two items in one coordination (a move: `forMoving` the source, `forReplacing` the destination).
    public func coordinate<T>(
        writingItemAt firstURL: URL, options firstOptions: CoordinatedWritingOptions = [],
        writingItemAt secondURL: URL, options secondOptions: CoordinatedWritingOptions = [], timeout: Duration? = nil,
        byAccessor accessor: (URL, URL) throws -> T
    ) throws -> T {
        try coordinateBlocking(
            [.writingIntent(with: firstURL, options: firstOptions), .writingIntent(with: secondURL, options: secondOptions)],
            timeout: timeout
        ) { try accessor($0[0].url, $0[1].url) }
    }

    /// Coordinates many items at once, for a batch operation; coordinations of these items (or
    /// of items inside the folders among them, where free) run inside `accessor` without waiting.
    public func prepare<T>(
        forReadingItemsAt readURLs: [URL], options readOptions: CoordinatedReadingOptions = [],
        writingItemsAt writeURLs: [URL], options writeOptions: CoordinatedWritingOptions = [], timeout: Duration? = nil,
        byAccessor accessor: () throws -> T
    ) throws -> T {
        let intents = readURLs.map { FileAccessIntent.readingIntent(with: $0, options: readOptions) }
            + writeURLs.map { FileAccessIntent.writingIntent(with: $0, options: writeOptions) }
        return try coordinateBlocking(intents, timeout: timeout) { _ in try accessor() }
    }

    // MARK: Asynchronous form

    /// Coordinates `intents` and runs `accessor` with them once access is granted; the intents'
    /// ``FileAccessIntent/url`` are then the resolved URLs.
    ///
    /// Waiting does not block a thread. Cancelling the task ends the wait with
    /// `CancellationError`, and `accessor` does not run.
    public func coordinate<T: Sendable>(
        with intents: [FileAccessIntent], timeout: Duration? = nil,
        byAccessor accessor: ([FileAccessIntent]) async throws -> T
    ) async throws -> T {
        var intents = intents
        var (plan, resolved) = try makePlan(intents)
        let enclosing = Self.heldByEnclosingCoordination.filter { $0.holder?.isLive == true }
        if !enclosing.isEmpty {
            return try await runNested(plan, resolved, enclosing: enclosing, accessor: accessor)
        }
        var held = try HeldLocks(namespace: namespace)
        var wait = WaitRecord()
        for attempt in 0..<Self.moveFollowingLimit {
            wait.startedAt = nil
            do {
                try await acquireWaiting(plan, into: held, timeout: timeout) { wait.begin(resolved) }
            } catch {
                held.releaseAll()
                throw error
            }
            guard try followMove(after: wait, attempt: attempt, &intents, &plan, &resolved, &held) else { break }
        }
        defer { held.releaseAll() }
        let sessions = try await askPresenters(resolved)
        let granted = grant(resolved, startingIdentities: wait.startingIdentities)
        do {
            let result = try await Self.$heldByEnclosingCoordination.withValue(held.held) { try await accessor(granted) }
            await sessions.end()
            return result
        } catch {
            await sessions.end()
            throw error
        }
    }

    // MARK: Moves

    /// How many times one coordination follows an item that moved while it waited.
    static let moveFollowingLimit = 8

    /// Announces, inside a coordinated write, that the item at `oldURL` now is at `newURL`:
    /// coordinations that were waiting for it follow it to its new URL, and this process's
    /// presenters of it hear ``FilePresenter/presentedItemDidMove(to:)`` (other processes'
    /// presenters hear it through their watcher).
    ///
    /// - Throws: `invalidArgument` outside a coordination's accessor.
    public func item(at oldURL: URL, didMoveTo newURL: URL) throws(DocumentKitError) {
        guard Self.heldByEnclosingCoordination.contains(where: { $0.holder?.isLive == true }) else {
            throw DocumentKitError(
                .invalidArgument, operation: .move, path: oldURL.path,
                detail: "item(at:didMoveTo:) must be called inside a coordinated write of the item.")
        }
        let old = try ItemPath.resolve(oldURL, resolvingFinalLink: false, namespace: namespace)
        let new = try ItemPath.resolve(newURL, resolvingFinalLink: false, namespace: namespace)
        namespace.moves.record(old.unitOffset, movedTo: new.path)
        namespace.presenters.itemDidMove(from: old.path, to: new.path)
    }

    /// What a coordination noted when it had to wait: the items' identities when it first began
    /// (to tell whether one was deleted meanwhile), the identities of their lock units when the
    /// current attempt began waiting (to find a unit renamed by a program that does not
    /// coordinate), and when that attempt began.
    struct WaitRecord {
        var startingIdentities: [(UInt64, UInt64)?]?
        var unitIdentities: [(UInt64, UInt64)?] = []
        var startedAt: UInt64?

        mutating func begin(_ resolved: [Resolved]) {
            if startingIdentities == nil { startingIdentities = resolved.map { FileCoordinator.identity(of: $0.item.path) } }
            if startedAt == nil {
                startedAt = MoveJournal.now()
                unitIdentities = resolved.map { FileCoordinator.identity(of: $0.item.path(upTo: $0.item.lockUnitIndex)) }
            }
        }
    }

    /// After the locks are taken: if an item moved while this attempt waited (a coordinated mover
    /// said so), releases the locks and re-plans for the new URLs; returns whether to take them again.
    private func followMove(
        after wait: WaitRecord, attempt: Int, _ intents: inout [FileAccessIntent], _ plan: inout LockPlan,
        _ resolved: inout [Resolved], _ held: inout HeldLocks
    ) throws(DocumentKitError) -> Bool {
        guard let since = wait.startedAt, attempt + 1 < Self.moveFollowingLimit,
            let moved = movedIntents(intents, resolved, since: since, unitIdentities: wait.unitIdentities)
        else { return false }
        held.releaseAll()
        intents = moved
        (plan, resolved) = try makePlan(intents)
        held = try HeldLocks(namespace: namespace)
        return true
    }

    /// The intents with the URLs of items that moved since `since`; nil if none moved. A move is
    /// known from the journal of coordinated movers, else (the unit's name now leads nowhere) by
    /// finding the unit's file under another name in its folder.
    private func movedIntents(
        _ intents: [FileAccessIntent], _ resolved: [Resolved], since: UInt64, unitIdentities: [(UInt64, UInt64)?]
    ) -> [FileAccessIntent]? {
        var moved = intents
        var any = false
        for (index, entry) in resolved.enumerated() {
            let unitIndex = entry.item.lockUnitIndex
            let unitPath = entry.item.path(upTo: unitIndex)
            var destination = namespace.moves.destination(of: entry.item.unitOffset, since: since)
            if destination == nil, index < unitIdentities.count, let (device, inode) = unitIdentities[index],
                Self.identity(of: unitPath) == nil
            {
                destination = RenameFinder.find(device: device, inode: inode, in: ItemPath.parent(of: unitPath))
            }
            guard let destination else { continue }
            // The unit moved: the item is at the same place below the unit's new path.
            let rest = entry.item.path.dropFirst(unitPath.count)
            moved[index].url = URL(fileURLWithPath: destination + rest)
            any = true
        }
        return any ? moved : nil
    }

    // MARK: Internals

    private func coordinateBlocking<T>(
        _ intents: [FileAccessIntent], timeout: Duration?, accessor: ([FileAccessIntent]) throws -> T
    ) throws -> T {
        var intents = intents
        var (plan, resolved) = try makePlan(intents)
        let enclosing = Self.heldByEnclosingCoordination.filter { $0.holder?.isLive == true }
        var held = try HeldLocks(namespace: namespace)
        defer { held.releaseAll() }
        if !enclosing.isEmpty {
            let covering = enclosing.filter { $0.holder?.lockFile == held.holder.lockFile }
            if !plan.isCovered(by: covering) { try takeWithoutWaiting(plan, into: held, enclosing: covering) }
        }
        var wait = WaitRecord()
        if enclosing.isEmpty {
            for attempt in 0..<Self.moveFollowingLimit {
                wait.startedAt = nil
                try acquireBlocking(plan, into: held, timeout: timeout) { wait.begin(resolved) }
                guard try followMove(after: wait, attempt: attempt, &intents, &plan, &resolved, &held) else { break }
            }
        }
        let sessions = enclosing.isEmpty ? try askPresentersBlocking(resolved) : PresenterSessions()
        defer { sessions.endBlocking() }
        let granted = grant(resolved, startingIdentities: wait.startingIdentities)
        return try Self.$heldByEnclosingCoordination.withValue(enclosing.isEmpty ? held.held : enclosing + held.held) { try accessor(granted) }
    }

    private func runNested<T: Sendable>(
        _ plan: LockPlan, _ resolved: [Resolved], enclosing: [LockPlan.Lock],
        accessor: ([FileAccessIntent]) async throws -> T
    ) async throws -> T {
        let held = try HeldLocks(namespace: namespace)
        defer { held.releaseAll() }
        let covering = enclosing.filter { $0.holder?.lockFile == held.holder.lockFile }
        if !plan.isCovered(by: covering) { try takeWithoutWaiting(plan, into: held, enclosing: covering) }
        let granted = grant(resolved, startingIdentities: nil)
        return try await Self.$heldByEnclosingCoordination.withValue(enclosing + held.held) { try await accessor(granted) }
    }

    struct Resolved: Sendable {
        let intent: FileAccessIntent
        let item: ItemPath
        /// The intent's path as its URL spells it.
        var requestedPath: String = ""
    }

    private func makePlan(_ intents: [FileAccessIntent]) throws(DocumentKitError) -> (LockPlan, [Resolved]) {
        var plan = LockPlan()
        var resolved: [Resolved] = []
        for intent in intents {
            let resolvesLink: Bool
            let writing: Bool
            let scopesSubtree: Bool
            switch intent.access {
            case .reading(let options):
                (resolvesLink, writing, scopesSubtree) = (options.contains(.resolvesSymbolicLink), false, false)
            case .writing(let options):
                (resolvesLink, writing, scopesSubtree) = (false, true, options.scopesSubtree)
            }
            let (item, requestedPath) = try ItemPath.resolveNoting(intent.url, resolvingFinalLink: resolvesLink, namespace: namespace)
            plan.add(item, writing: writing, scopesSubtree: scopesSubtree)
            resolved.append(Resolved(intent: intent, item: item, requestedPath: requestedPath))
        }
        try refuseCoordinationFromPresenterCallback(plan, resolved)
        return (plan, resolved)
    }

    /// The intents as granted: resolved URLs, and whether each item disappeared while the
    /// coordination waited (`startingIdentities`, taken when the wait began; nil if it never waited).
    private func grant(_ resolved: [Resolved], startingIdentities: [(UInt64, UInt64)?]?)
        -> [FileAccessIntent]
    {
        var granted: [FileAccessIntent] = []
        granted.reserveCapacity(resolved.count)
        for (index, entry) in resolved.enumerated() {
            var intent = entry.intent
            if entry.item.path != entry.requestedPath { intent.url = URL(fileURLWithPath: entry.item.path) }
            if let startingIdentities, startingIdentities[index] != nil {
                intent.itemWasDeletedWhileWaiting = Self.identity(of: entry.item.path) == nil
            }
            granted.append(intent)
        }
        return granted
    }

    static func identity(of path: String) -> (UInt64, UInt64)? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Takes the plan's locks in order, polling while one is held elsewhere; `willWait` runs
    /// before the first wait.
    private func acquireBlocking(_ plan: LockPlan, into held: HeldLocks, timeout: Duration?, willWait: () -> Void) throws {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        for lock in plan.locks {
            var backoff = Backoff()
            while try !held.tryTake(lock) {
                willWait()
                if let deadline, clock.now >= deadline { throw timedOut(lock, timeout!) }
                let delay = backoff.next()
                usleep(useconds_t(delay.components.attoseconds / 1_000_000_000_000 + delay.components.seconds * 1_000_000))
            }
        }
    }

    private func acquireWaiting(_ plan: LockPlan, into held: HeldLocks, timeout: Duration?, willWait: () -> Void) async throws {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        for lock in plan.locks {
            var backoff = Backoff()
            while try !held.tryTake(lock) {
                willWait()
                try Task.checkCancellation()
                if let deadline, clock.now >= deadline { throw timedOut(lock, timeout!) }
                try await Task.sleep(for: backoff.next())
            }
        }
        try Task.checkCancellation()
    }

    private func takeWithoutWaiting(_ plan: LockPlan, into held: HeldLocks, enclosing: [LockPlan.Lock]) throws(DocumentKitError) {
        for lock in plan.locks where !enclosing.contains(where: { $0.offset == lock.offset && $0.mode >= lock.mode }) {
            guard try held.tryTake(lock) else {
                throw DocumentKitError(
                    .busy, operation: .open, path: lock.purpose.description,
                    detail: "A coordination inside another one would have to wait for it (a deadlock risk); coordinate all the items of the operation in one call instead.")
            }
        }
    }

    private func timedOut(_ lock: LockPlan.Lock, _ timeout: Duration) -> DocumentKitError {
        DocumentKitError(.busy, operation: .open, path: lock.purpose.description, detail: "Another coordination held it for longer than \(timeout).")
    }
}
