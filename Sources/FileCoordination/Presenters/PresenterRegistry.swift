#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Dispatch
import Foundation
import Synchronization

/// The presenters of one process in one namespace, and the watcher that tells them about
/// changes. Events only mark presenters to look again; what is delivered comes from comparing
/// the item on disk with what the presenter last heard, so every change arrives once however
/// many events (or polls) saw it.
///
/// What a presenter knows of its item (path, snapshot, folder tree) changes only on `queue`:
/// registering, removing, moves and looking again are serialized there.
final class PresenterRegistry: Sendable {
    struct Registration {
        let presenter: any FilePresenter
        let mailbox = PresenterMailbox()
        var path: String
        var snapshot = ItemSnapshot()
        /// For a presented folder or package: what is inside (taken out while being looked at).
        var tree: FolderTree?
        var isPackage: Bool
        /// The lock unit the presented item belongs to (the item, or its outermost package).
        var unit: Int64?
        /// A coordinated deletion was announced; the watcher does not announce it again.
        var deletionAnnounced = false
        /// Entries of the presented folder whose coordinated deletion was announced: the watcher
        /// does not announce them again.
        var announcedSubitemDeletions: Set<String> = []
        /// The presenter is saving its changes: what the watcher sees meanwhile is its own doing.
        var isSaving = false
    }

    struct State {
        var registrations: [Int: Registration] = [:]
        var nextID = 0
        /// What each presenter must look at again.
        var pending: [Int: PendingLook] = [:]
        /// The last watcher read whose events are in `pending`.
        var pendingRead = 0
        var scheduled = false
        var polling = false
        /// How many presenters of each unit this process has.
        var units: [Int64: Int] = [:]
    }

    let isPackageName: @Sendable (String) -> Bool
    let state = Mutex(State())
    let queue = DispatchQueue(label: "DocumentKit.presenters")
    private let queueKey = DispatchSpecificKey<Bool>()
    /// How long events settle before presenters are told (bursts become one callback).
    let settle: DispatchTimeInterval = .microseconds(700)
    /// The folders watched (and polled) for the presenters.
    let watches = FolderWatches()

    init(isPackageName: @escaping @Sendable (String) -> Bool) {
        self.isPackageName = isPackageName
        queue.setSpecific(key: queueKey, value: true)
        watches.attach(
            deliver: { [weak self] events, overflowed, read in self?.handle(events, overflowed: overflowed, read: read) },
            pollingNeeded: { [weak self] in self?.startPolling() })
    }

    /// Runs `body` on `queue` (at once if already there).
    func onQueue<T>(_ body: () -> T) -> T {
        DispatchQueue.getSpecific(key: queueKey) == true ? body() : queue.sync(execute: body)
    }

    // MARK: Registration

    func add(_ presenter: any FilePresenter, unit: Int64?) -> Int? {
        guard let url = presenter.presentedItemURL else { return nil }
        let path = Self.realPath(of: url)
        let isPackage = isPackageName((path as NSString).lastPathComponent)
        return onQueue {
            let id = state.withLock { state -> Int in
                state.nextID += 1
                state.registrations[state.nextID] = Registration(presenter: presenter, path: path, isPackage: isPackage, unit: unit)
                if let unit { state.units[unit, default: 0] += 1 }
                return state.nextID
            }
            // Watched before it is read, so that nothing changed in between goes unseen.
            watchItem(id, at: path)
            var ignored = TreeChanges()
            let (snapshot, tree) = read(id, at: path, isPackage: isPackage, changes: &ignored)
            state.withLock { state in
                state.registrations[id]?.snapshot = snapshot
                state.registrations[id]?.tree = tree
            }
            return id
        }
    }

    /// Removes the presenter `id`; returns its unit if it was the last presenter of it here.
    @discardableResult
    func remove(_ id: Int) -> Int64? {
        // The registration is handed out of the queue and released here: a presenter's deinit
        // may remove other presenters, which must not wait for the queue it would be running on.
        let (removed, lastOfUnit) = onQueue { () -> (Registration?, Int64?) in
            let (removed, lastOfUnit) = state.withLock { state -> (Registration?, Int64?) in
                state.pending.removeValue(forKey: id)
                guard let removed = state.registrations.removeValue(forKey: id) else { return (nil, nil) }
                guard let unit = removed.unit else { return (removed, nil) }
                state.units[unit, default: 1] -= 1
                guard state.units[unit] == 0 else { return (removed, nil) }
                state.units.removeValue(forKey: unit)
                return (removed, unit)
            }
            if let removed { unwatch(id, at: removed.path, tree: removed.tree) }
            return (removed, lastOfUnit)
        }
        _ = removed
        return lastOfUnit
    }

    /// How many presenters of `unit` this process has.
    func presenterCount(of unit: Int64) -> Int { state.withLock { $0.units[unit] ?? 0 } }

    /// How many presenters are registered.
    var count: Int { state.withLock { $0.registrations.count } }

    /// Records the item's present state as known to the presenter `id` (after its own write),
    /// so the watcher does not report that write back to it.
    func noteCurrentState(of id: Int) {
        onQueue { look(at: id, PendingLook(item: true, everything: true), announcing: false) }
    }

    /// The units presented in this process, with how many presenters each.
    var presentedUnits: [Int64: Int] { state.withLock { $0.units } }

    /// Asks this process's presenters of `request.unit` (except `excluded`) to save and step
    /// aside, each on its own serial delivery; returns their reacquirers, or the first error.
    ///
    /// A presenter of a folder or package holding the item hears a deletion as
    /// `accommodatePresentedSubitemDeletion(at:)`. `inline`: see ``PresenterMailbox/perform(inline:_:)``.
    func prepare(_ request: PresenterRequest, excluding excluded: Int?, inline: Bool = false) async
        -> Result<[@Sendable () async -> Void], DocumentKitError>
    {
        let targets = state.withLock { state in
            state.registrations.compactMap { $0.key != excluded && $0.value.unit == request.unit ? ($0.key, $0.value) : nil }
        }
        let deletes = request.kind == .deletion || request.kind == .subitemDeletion
        var reacquirers: [@Sendable () async -> Void] = []
        for (id, registration) in targets {
            let presenter = registration.presenter
            // A folder or package holding the item hears of a subitem's deletion.
            let holdsItem = request.kind == .subitemDeletion || Self.path(request.path, isInside: registration.path)
            let outcome: Result<(@Sendable () async -> Void)?, DocumentKitError> = await registration.mailbox.perform(inline: inline) {
                await PresenterCallbackContext.$units.withValue([request.itemUnit]) {
                    if request.save {
                        self.state.withLock { $0.registrations[id]?.isSaving = true }
                        defer {
                            // What the presenter saved is its own change: the watcher must not report it back.
                            self.noteCurrentState(of: id)
                            self.state.withLock { $0.registrations[id]?.isSaving = false }
                        }
                        do { try await presenter.savePresentedItemChanges() } catch {
                            return .failure(
                                DocumentKitError(
                                    .busy, operation: .open, path: request.path,
                                    detail: "A presenter could not save its changes first: \(error)"))
                        }
                    }
                    var reacquirer: (@Sendable () async -> Void)?
                    switch request.kind {
                    case .reader: reacquirer = await presenter.relinquishPresentedItemToReader()
                    case .writer, .deletion: reacquirer = await presenter.relinquishPresentedItemToWriter()
                    case .subitemDeletion: reacquirer = nil
                    }
                    if deletes && holdsItem {
                        await presenter.accommodatePresentedSubitemDeletion(at: URL(fileURLWithPath: request.path))
                    } else if request.kind == .deletion {
                        await presenter.accommodatePresentedItemDeletion()
                    }
                    return .success(reacquirer)
                }
            }
            switch outcome {
            case .failure(let error):
                for reacquire in reacquirers { await reacquire() }
                return .failure(error)
            case .success(let reacquirer):
                if let reacquirer { reacquirers.append(reacquirer) }
                if deletes && !holdsItem {
                    state.withLock { $0.registrations[id]?.deletionAnnounced = true }
                } else if deletes, let withdraw = announceSubitemDeletion(request.path, to: id) {
                    reacquirers.append(withdraw)
                }
            }
        }
        return .success(reacquirers)
    }

    /// This process missed coordinators' requests (it was stopped, or too slow, and was marked
    /// unresponsive): every presenter looks at its item again and hears that it changed.
    func announceMissedRequests() {
        let ids = state.withLock { Array($0.registrations.keys) }
        for id in ids {
            mark(id) {
                $0.item = true
                $0.everything = true
                $0.missedRequests = true
            }
        }
    }

    /// Whether `path` is below `folder` (not `folder` itself).
    static func path(_ path: String, isInside folder: String) -> Bool {
        path.utf8.count > folder.utf8.count && path.utf8.starts(with: folder.utf8)
            && path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: folder.utf8.count)] == UInt8(ascii: "/")
    }

    /// Notes that the presenter `id` heard of the coming deletion of `path`, so that the watcher
    /// does not report it again, if the watcher would report it (anything inside the presented
    /// folder, at any depth). Returns what to run when the coordination ends: if the item is still there, it
    /// was not deleted, and the note is dropped.
    private func announceSubitemDeletion(_ path: String, to id: Int) -> (@Sendable () async -> Void)? {
        let noted = state.withLock { state -> Bool in
            guard let registration = state.registrations[id], registration.snapshot.isDirectory, !registration.isPackage,
                Self.path(path, isInside: registration.path)
            else { return false }
            state.registrations[id]?.announcedSubitemDeletions.insert(path)
            return true
        }
        guard noted else { return nil }
        return { [weak self] in
            var status = stat()
            guard lstat(path, &status) == 0 else { return }
            self?.state.withLock { _ = $0.registrations[id]?.announcedSubitemDeletions.remove(path) }
        }
    }

    /// A coordinated move of the item at `oldPath` (or a folder holding presented items):
    /// presenters at or below it follow it and hear that they moved.
    func itemDidMove(from oldPath: String, to newPath: String) {
        onQueue {
            let moved = state.withLock { state in
                state.registrations.filter { $0.value.path == oldPath || $0.value.path.hasPrefix(oldPath + "/") }.map { ($0.key, $0.value) }
            }
            for (id, registration) in moved {
                let path = newPath + registration.path.dropFirst(oldPath.count)
                follow(id, from: registration.path, to: path, tree: registration.tree)
                let snapshot = Self.snapshot(of: path, isPackage: registration.isPackage)
                state.withLock { $0.registrations[id]?.snapshot = snapshot }
                registration.mailbox.send([.moved(to: URL(fileURLWithPath: path, isDirectory: snapshot.isDirectory))], to: registration.presenter)
                if registration.tree != nil { mark(id) { $0.everything = true } }  // what moved along is looked at anew
            }
        }
    }

    /// The path with its folder resolved by the kernel (so events, which name watched folders by
    /// the paths we gave, match), and its last component as given.
    static func realPath(of url: URL) -> String {
        var path = url.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard let resolved = realpath(folder.isEmpty ? "/" : folder, nil) else { return path }
        defer { free(resolved) }
        let real = String(cString: resolved)
        return (real == "/" ? "" : real) + "/" + name
    }
}
