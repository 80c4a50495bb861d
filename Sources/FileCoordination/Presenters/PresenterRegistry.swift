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
/// many events it caused.
final class PresenterRegistry: Sendable {
    private struct Registration {
        let presenter: any FilePresenter
        let mailbox = PresenterMailbox()
        var path: String
        var snapshot: ItemSnapshot
        /// For a presented plain folder: its entries, for subitem callbacks.
        var children: [String: ItemSnapshot.Child]?
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

    private struct State {
        var registrations: [Int: Registration] = [:]
        var nextID = 0
        var dirty: Set<Int> = []
        var scheduled = false
        /// How many presenters of each unit this process has.
        var units: [Int64: Int] = [:]
    }

    private let isPackageName: @Sendable (String) -> Bool
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "DocumentKit.presenters")
    /// How long events settle before presenters are told (bursts become one callback).
    private let settle: DispatchTimeInterval = .milliseconds(1)
    private let watcherBox = Mutex<FileWatcher?>(nil)

    init(isPackageName: @escaping @Sendable (String) -> Bool) {
        self.isPackageName = isPackageName
    }

    private var watcher: FileWatcher {
        watcherBox.withLock { box in
            if let box { return box }
            let made = FileWatcher { [weak self] events, overflowed in self?.handle(events, overflowed: overflowed) }
            box = made
            return made
        }
    }

    // MARK: Registration

    func add(_ presenter: any FilePresenter, unit: Int64?) -> Int? {
        guard let url = presenter.presentedItemURL else { return nil }
        let path = Self.realPath(of: url)
        let name = (path as NSString).lastPathComponent
        var snapshot = ItemSnapshot.read(path, depth: .identity)
        let isPackage = snapshot.isDirectory && isPackageName(name)
        if !snapshot.isDirectory || isPackage { snapshot = ItemSnapshot.read(path, depth: .contents) }
        let children = snapshot.isDirectory && !isPackage ? ItemSnapshot.children(of: path, isPackage: isPackageName) : nil
        let registration = Registration(
            presenter: presenter, path: path, snapshot: snapshot, children: children, isPackage: isPackage, unit: unit)
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.registrations[state.nextID] = registration
            if let unit { state.units[unit, default: 0] += 1 }
            return state.nextID
        }
        watchFolders(of: registration)
        return id
    }

    /// Removes the presenter `id`; returns its unit if it was the last presenter of it here.
    @discardableResult
    func remove(_ id: Int) -> Int64? {
        state.withLock { state -> Int64? in
            guard let unit = state.registrations.removeValue(forKey: id)?.unit else { return nil }
            state.units[unit, default: 1] -= 1
            guard state.units[unit] == 0 else { return nil }
            state.units.removeValue(forKey: unit)
            return unit
        }
    }

    /// How many presenters of `unit` this process has.
    func presenterCount(of unit: Int64) -> Int { state.withLock { $0.units[unit] ?? 0 } }

    /// How many presenters are registered.
    var count: Int { state.withLock { $0.registrations.count } }

    /// Records the item's present state as known to the presenter `id` (after its own write),
    /// so the watcher does not report that write back to it.
    func noteCurrentState(of id: Int) {
        state.withLock { state in
            guard var registration = state.registrations[id] else { return }
            registration.snapshot = Self.snapshot(registration)
            if registration.children != nil {
                registration.children = ItemSnapshot.children(of: registration.path, isPackage: isPackageName)
            }
            state.registrations[id] = registration
        }
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

    /// Whether `path` is below `folder` (not `folder` itself).
    private static func path(_ path: String, isInside folder: String) -> Bool {
        path.utf8.count > folder.utf8.count && path.utf8.starts(with: folder.utf8)
            && path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: folder.utf8.count)] == UInt8(ascii: "/")
    }

    /// Notes that the presenter `id` heard of the coming deletion of `path`, so that the watcher
    /// does not report it again, if the watcher would report it (an entry of the presented
    /// folder). Returns what to run when the coordination ends: if the item is still there, it
    /// was not deleted, and the note is dropped.
    private func announceSubitemDeletion(_ path: String, to id: Int) -> (@Sendable () async -> Void)? {
        let noted = state.withLock { state -> Bool in
            guard let registration = state.registrations[id], registration.snapshot.isDirectory, !registration.isPackage,
                let slash = path.lastIndex(of: "/"), path[..<slash] == registration.path
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
        let moved = state.withLock { state -> [(any FilePresenter, PresenterMailbox, String, Registration)] in
            var moved: [(any FilePresenter, PresenterMailbox, String, Registration)] = []
            for (id, var registration) in state.registrations
            where registration.path == oldPath || registration.path.hasPrefix(oldPath + "/") {
                registration.path = newPath + registration.path.dropFirst(oldPath.count)
                registration.snapshot = Self.snapshot(registration)
                state.registrations[id] = registration
                moved.append((registration.presenter, registration.mailbox, registration.path, registration))
            }
            return moved
        }
        for (presenter, mailbox, path, registration) in moved {
            watchFolders(of: registration)
            let url = URL(fileURLWithPath: path)
            mailbox.send { await presenter.presentedItemDidMove(to: url) }
        }
    }

    // MARK: Events

    private func handle(_ events: [FileWatcher.Event], overflowed: Bool) {
        let schedule = state.withLock { state -> Bool in
            for (id, registration) in state.registrations where overflowed || Self.concerns(events, registration.path) {
                state.dirty.insert(id)
            }
            guard !state.dirty.isEmpty, !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { queue.asyncAfter(deadline: .now() + settle) { self.evaluate() } }
    }

    private static func concerns(_ events: [FileWatcher.Event], _ path: String) -> Bool {
        events.contains { event in
            if event.folder == path { return true }
            let eventPath = event.name.map { event.folder + "/" + $0 } ?? event.folder
            return eventPath == path || eventPath.hasPrefix(path + "/")
        }
    }

    private func evaluate() {
        let work = state.withLock { state -> [(Int, Registration)] in
            state.scheduled = false
            let ids = state.dirty
            state.dirty.removeAll()
            return ids.compactMap { id in state.registrations[id].map { (id, $0) } }
        }
        for (id, old) in work where !old.isSaving {
            var registration = old
            deliverChanges(&registration, id: id)
            state.withLock { state in
                guard let live = state.registrations[id] else { return }
                registration.announcedSubitemDeletions = live.announcedSubitemDeletions  // kept only in the live state
                state.registrations[id] = registration
            }
            if registration.path != old.path || registration.snapshot.inode != old.snapshot.inode
                || registration.children != old.children
            {
                watchFolders(of: registration)
            }
        }
        watcher.forgetRenames()
    }

    private func deliverChanges(_ registration: inout Registration, id: Int) {
        let presenter = registration.presenter
        let mailbox = registration.mailbox
        let current = Self.snapshot(registration)
        if !current.exists {
            if registration.snapshot.exists {
                if let destination = watcher.destination(ofRenameFrom: registration.path),
                    ItemSnapshot.read(destination, depth: .identity).inode == registration.snapshot.inode
                {
                    registration.path = destination
                    registration.snapshot = Self.snapshot(registration)
                    let url = URL(fileURLWithPath: destination)
                    mailbox.send { await presenter.presentedItemDidMove(to: url) }
                } else {
                    registration.snapshot = current
                    if !registration.deletionAnnounced {
                        mailbox.send { await presenter.accommodatePresentedItemDeletion() }
                    }
                    registration.deletionAnnounced = false
                    return
                }
            } else {
                return
            }
        } else if current != registration.snapshot {
            registration.snapshot = current
            registration.deletionAnnounced = false
            mailbox.send { await presenter.presentedItemDidChange() }
        }
        guard let before = registration.children else { return }
        let after = ItemSnapshot.children(of: registration.path, isPackage: isPackageName)
        registration.children = after
        let announced = takeAnnouncedSubitemDeletions(of: id, in: registration.path, absentFrom: after)
        deliverSubitemChanges(
            from: before, to: after, in: registration.path, presenter: presenter, mailbox: mailbox, announced: announced)
    }

    /// The announced deletions of entries now gone from the folder: the presenter heard of them
    /// from the coordinator, and the notes are used up.
    private func takeAnnouncedSubitemDeletions(of id: Int, in folder: String, absentFrom after: [String: ItemSnapshot.Child])
        -> Set<String>
    {
        state.withLock { state in
            guard let announced = state.registrations[id]?.announcedSubitemDeletions, !announced.isEmpty else { return [] }
            let gone = announced.filter { after[String($0.dropFirst(folder.count + 1))] == nil }
            state.registrations[id]?.announcedSubitemDeletions.subtract(gone)
            return gone
        }
    }

    /// `announced`: deleted entries the presenter already heard of (not announced again).
    private func deliverSubitemChanges(
        from before: [String: ItemSnapshot.Child], to after: [String: ItemSnapshot.Child], in folder: String,
        presenter: any FilePresenter, mailbox: PresenterMailbox, announced: Set<String>
    ) {
        func url(_ name: String) -> URL { URL(fileURLWithPath: folder + "/" + name) }
        var appeared = after.keys.filter { before[$0] == nil }
        for name in before.keys.sorted() {
            guard let old = before[name] else { continue }
            if let new = after[name] {
                if new != old {
                    let changed = url(name)
                    mailbox.send { await presenter.presentedSubitemDidChange(at: changed) }
                }
            } else if let index = appeared.firstIndex(where: { candidate in
                // The same file under a new name, or a rename the watcher saw (the file may also
                // have been replaced by a save just before or after the rename).
                after[candidate]?.inode == old.inode || watcher.destination(ofRenameFrom: folder + "/" + name) == folder + "/" + candidate
            }) {
                let (from, to) = (url(name), url(appeared.remove(at: index)))
                mailbox.send { await presenter.presentedSubitem(at: from, didMoveTo: to) }
            } else if !announced.contains(folder + "/" + name) {
                let deleted = url(name)
                mailbox.send { await presenter.accommodatePresentedSubitemDeletion(at: deleted) }
            }
        }
        for name in appeared.sorted() {
            let appearedURL = url(name)
            mailbox.send { await presenter.presentedSubitemDidAppear(at: appearedURL) }
        }
    }

    // MARK: Helpers

    private static func snapshot(_ registration: Registration) -> ItemSnapshot {
        let identity = ItemSnapshot.read(registration.path, depth: .identity)
        guard identity.exists, !identity.isDirectory || registration.isPackage else { return identity }
        return ItemSnapshot.read(registration.path, depth: .contents)
    }

    /// The folders to watch for a presented item: its folder; itself if it is a folder; every
    /// folder inside it if it is a package; and, for a plain folder, every package directly in it
    /// (changes inside those are changes of its subitems).
    private func watchFolders(of registration: Registration) {
        let parent = (registration.path as NSString).deletingLastPathComponent
        watcher.watch(parent.isEmpty ? "/" : parent)
        guard registration.snapshot.isDirectory else { return }
        if registration.isPackage {
            watchTree(registration.path)
        } else {
            watcher.watch(registration.path)
            for (name, child) in registration.children ?? [:] where child.isDirectory && isPackageName(name) {
                watchTree(registration.path + "/" + name)
            }
        }
    }

    private func watchTree(_ root: String) {
        watcher.watch(root)
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var status = stat()
            let path = root + "/" + relative
            if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR { watcher.watch(path) }
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
