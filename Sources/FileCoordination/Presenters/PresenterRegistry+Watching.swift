#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// What a presenter must look at again.
struct PendingLook: Sendable {
    /// The presented item itself (whether it changed, moved or went).
    var item = false
    /// Everything in a presented folder (after an overflow or a move, or after its own write).
    var everything = false
    /// The presenter missed coordinators' requests (its process did not answer in time): it
    /// hears `presentedItemDidChange` even if the item looks the same (see ``UnresponsiveMark``).
    var missedRequests = false
    /// Folders inside a presented folder, relative, with the entries to look at in each.
    var folders: [String: FolderTree.Names] = [:]

    /// Adds `names` of `folder` to what to look at.
    mutating func add(_ folder: String, _ names: FolderTree.Names) {
        if var known = folders[folder] {
            known.formUnion(names)
            folders[folder] = known
        } else {
            folders[folder] = names
        }
    }
}

extension PresenterRegistry {
    // MARK: Events

    /// Marks the presenters the events concern (all of them after an overflow) and schedules a
    /// look once events settle. `read` is the watcher read the events came from (nil for a poll).
    func handle(_ events: [FileWatcher.Event], overflowed: Bool, read: Int?) {
        let concerns = watches.concerns(events)
        let schedule = state.withLock { state -> Bool in
            if let read { state.pendingRead = read }
            if overflowed {
                for id in state.registrations.keys { state.pending[id] = PendingLook(item: true, everything: true) }
            }
            for concern in concerns {
                switch concern {
                case .item(let id):
                    if state.registrations[id] != nil { state.pending[id, default: PendingLook()].item = true }
                case .inside(let id, let folder, let name):
                    guard let registration = state.registrations[id] else { continue }
                    if registration.isPackage {
                        state.pending[id, default: PendingLook()].item = true
                    } else if let relative = Self.relative(folder, in: registration.path) {
                        state.pending[id, default: PendingLook()].add(relative, name.map { .some([$0]) } ?? .all)
                    }
                }
            }
            return Self.scheduleIfNeeded(&state)
        }
        if schedule { queue.asyncAfter(deadline: .now() + settle) { self.evaluate() } }
    }

    /// Marks presenter `id` to look again as `change` says.
    func mark(_ id: Int, _ change: (inout PendingLook) -> Void) {
        let schedule = state.withLock { state -> Bool in
            change(&state.pending[id, default: PendingLook()])
            return Self.scheduleIfNeeded(&state)
        }
        if schedule { queue.asyncAfter(deadline: .now() + settle) { self.evaluate() } }
    }

    private static func scheduleIfNeeded(_ state: inout State) -> Bool {
        guard !state.pending.isEmpty, !state.scheduled else { return false }
        state.scheduled = true
        return true
    }

    private func evaluate() {
        let (pending, read) = state.withLock { state in
            state.scheduled = false
            defer { state.pending.removeAll() }
            return (state.pending, state.pendingRead)
        }
        for (id, look) in pending.sorted(by: { $0.key < $1.key }) { self.look(at: id, look) }
        watches.watcher?.forgetRenames(through: read)
    }

    // MARK: Looking again

    /// Compares presenter `id`'s item with what it last heard and, when `announcing`, tells it
    /// what changed. Runs on `queue`.
    func look(at id: Int, _ look: PendingLook, announcing: Bool = true) {
        guard
            var item = state.withLock({ state -> Registration? in
                guard let registration = state.registrations[id], !(announcing && registration.isSaving) else { return nil }
                state.registrations[id]?.tree = nil  // taken out, so that changing it copies nothing
                return registration
            })
        else { return }
        var look = look
        var notices: [PresenterNotice] = []
        var heardDeletion = false
        if look.item || look.everything {
            if announcing && item.tree == nil && !item.isPackage && isBeingWritten(item.path) {
                postpone(id) { $0.item = true }  // its closing (or the write window's end) brings the look
            } else {
                heardDeletion = lookAtItem(id, &item, &look, &notices)
            }
        }
        lookInside(id, &item, look, &notices, postponingWrites: announcing)
        if look.missedRequests && item.snapshot.exists && !notices.contains(where: { $0 == .changed || $0 == .deleted }) {
            // What the watcher cannot see (a remote file system, a write undone meanwhile) may
            // still have happened while the presenter was not listening.
            notices.insert(.changed, at: 0)
        }
        state.withLock { state in
            state.registrations[id]?.snapshot = item.snapshot
            state.registrations[id]?.tree = item.tree
            if heardDeletion { state.registrations[id]?.deletionAnnounced = false }
        }
        if announcing { item.mailbox.send(notices, to: item.presenter) }
    }

    /// The item itself: changed, moved (followed), deleted. Returns whether a deletion or a
    /// change was seen (which uses up an announced deletion).
    private func lookAtItem(_ id: Int, _ item: inout Registration, _ look: inout PendingLook, _ notices: inout [PresenterNotice]) -> Bool {
        let current = Self.snapshot(of: item.path, isPackage: item.isPackage)
        if !current.exists {
            guard item.snapshot.exists else { return false }
            if let destination = destination(ofMoved: item) {
                follow(id, from: item.path, to: destination, tree: item.tree)
                item.path = destination
                item.snapshot = Self.snapshot(of: destination, isPackage: item.isPackage)
                notices.append(.moved(to: URL(fileURLWithPath: destination, isDirectory: item.snapshot.isDirectory)))
                look.everything = true
                return false
            }
            item.snapshot = current
            if let tree = item.tree {
                // What was still inside went with it (however the kernel batched the events).
                notices += TreeChanges(gone: item.isPackage ? [] : tree.items(isPackageName)).notices(in: item.path, renameDestination: { _ in nil })
                unwatch(tree.folders, of: id, at: item.path)
            }
            if !item.deletionAnnounced { notices.append(.deleted) }
            item.tree = nil
            return true
        }
        guard current != item.snapshot else { return false }
        let isAnotherItem = !current.isSameItem(as: item.snapshot)
        item.snapshot = current
        notices.append(.changed)
        let context = treeContext(for: id, at: item.path)
        if !current.isDirectory {
            if let tree = item.tree { unwatch(tree.folders, of: id, at: item.path) }
            item.tree = nil
        } else if item.isPackage {
            if item.tree == nil {
                item.tree = FolderTree.package(context)
            } else if let dropped = item.tree?.rereadPackage("", context) {
                unwatch(dropped, of: id, at: item.path)
            }
        } else if item.tree == nil {
            // A folder now where there was none: everything in it appeared.
            var changes = TreeChanges()
            item.tree = FolderTree.folder(context, &changes)
            notices += changes.notices(in: item.path, renameDestination: { _ in nil })
        } else if isAnotherItem {
            context.watch("")
            look.everything = true
        }
        return true
    }

    /// Inside a presented plain folder: rescans the folders events came from (or all of them);
    /// with `postponingWrites`, files being written are looked at later.
    private func lookInside(
        _ id: Int, _ item: inout Registration, _ look: PendingLook, _ notices: inout [PresenterNotice], postponingWrites: Bool
    ) {
        guard !item.isPackage, var tree = item.tree, look.everything || !look.folders.isEmpty else { return }
        var context = treeContext(for: id, at: item.path)
        if postponingWrites { context.isBeingWritten = isBeingWritten }
        var targets = PendingLook()
        if look.everything {
            for folder in tree.entries.keys { targets.add(folder, .all) }
        } else {
            for (folder, names) in look.folders {
                if let target = tree.target(ofEventIn: folder, names: names) { targets.add(target.folder, target.names) }
            }
        }
        var changes = TreeChanges()
        var dropped: [String] = []
        let outermostFirst = targets.folders.sorted { (TreeChanges.Item.depth(of: $0.key), $0.key) < (TreeChanges.Item.depth(of: $1.key), $1.key) }
        for (folder, names) in outermostFirst { tree.rescan(folder, names, context, &changes, dropped: &dropped) }
        for path in changes.postponed {
            let (folder, name) = FolderTree.split(path)
            postpone(id) { $0.add(folder, .some([name])) }
        }
        if !dropped.isEmpty {
            let remaining = Set(tree.folders)
            unwatch(dropped.filter { !remaining.contains($0) }, of: id, at: item.path)
        }
        item.tree = tree
        let watcher = watches.watcher
        let seen = changes.notices(in: item.path, renameDestination: { watcher?.destination(ofRenameFrom: $0) })
        notices += withoutAnnouncedDeletions(seen, of: id)
    }

    /// `seen` without the deletions a coordinator already announced to presenter `id` (an
    /// announced item, or anything inside an announced folder); the notes of deletions seen are used up.
    private func withoutAnnouncedDeletions(_ seen: [PresenterNotice], of id: Int) -> [PresenterNotice] {
        state.withLock { state in
            guard let announced = state.registrations[id]?.announcedSubitemDeletions, !announced.isEmpty else { return seen }
            var usedUp: Set<String> = []
            let kept = seen.filter { notice in
                guard case .subitemDeleted(let url) = notice else { return true }
                let path = url.path
                guard let note = announced.first(where: { $0 == path || Self.path(path, isInside: $0) }) else { return true }
                if note == path { usedUp.insert(note) }
                return false
            }
            state.registrations[id]?.announcedSubitemDeletions.subtract(usedUp)
            return kept
        }
    }

    /// Where a vanished item went: the rename the watcher saw, or (where its folder is polled)
    /// the same file under another name in its folder.
    private func destination(ofMoved item: Registration) -> String? {
        if let destination = watches.watcher?.destination(ofRenameFrom: item.path),
            ItemSnapshot.read(destination, depth: .identity).isSameItem(as: item.snapshot)
        {
            return destination
        }
        let folder = Self.folder(of: item.path)
        guard watches.isPolled(folder) else { return nil }
        return RenameFinder.find(device: item.snapshot.device, inode: item.snapshot.inode, in: folder)
    }

    // MARK: Watches

    /// How presenter `id`'s tree reaches the disk: every folder it reads is watched first.
    func treeContext(for id: Int, at path: String) -> FolderTree.Context {
        let watches = self.watches
        return FolderTree.Context(
            root: path, isPackageName: isPackageName,
            watch: { relative in watches.want(inside: FolderTree.absolute(relative, in: path), for: id, refresh: true) })
    }

    /// Whether the file at `path` is being written (created or modified within the write
    /// window, not closed yet): looking now could catch it half written, a change of its own.
    private func isBeingWritten(_ path: String) -> Bool {
        watches.watcher?.isBeingWritten(path, window: Self.writeWindow) ?? false
    }

    /// How long a file being written is left alone, at most.
    static var writeWindow: DispatchTimeInterval { .milliseconds(50) }

    /// Looks again after the write window (the file's closing usually brings the look sooner).
    private func postpone(_ id: Int, _ change: @escaping @Sendable (inout PendingLook) -> Void) {
        queue.asyncAfter(deadline: .now() + Self.writeWindow) { [weak self] in self?.mark(id, change) }
    }

    /// Reads presenter `id`'s item at `path`, and for a folder or package what is inside,
    /// watching every folder before reading it (so that nothing changed meanwhile goes unseen).
    func read(_ id: Int, at path: String, isPackage: Bool, changes: inout TreeChanges) -> (ItemSnapshot, FolderTree?) {
        let identity = ItemSnapshot.read(path, depth: .identity)
        guard identity.isDirectory else { return (Self.snapshot(of: path, isPackage: isPackage), nil) }
        let context = treeContext(for: id, at: path)
        guard isPackage else { return (identity, FolderTree.folder(context, &changes)) }
        let tree = FolderTree.package(context)
        return (ItemSnapshot.read(path, depth: .contents), tree)
    }

    /// Watches the folder of presenter `id`'s item for events about it.
    func watchItem(_ id: Int, at path: String) {
        watches.want(item: (path as NSString).lastPathComponent, in: Self.folder(of: path), for: id)
    }

    /// Stops watching for presenter `id`: its item's folder, and the folders of its tree.
    func unwatch(_ id: Int, at path: String, tree: FolderTree?) {
        watches.unwant(item: (path as NSString).lastPathComponent, in: Self.folder(of: path), for: id)
        unwatch(tree?.folders ?? [], of: id, at: path)
    }

    private func unwatch(_ folders: [String], of id: Int, at path: String) {
        for folder in folders { watches.unwant(inside: FolderTree.absolute(folder, in: path), for: id) }
    }

    /// Presenter `id`'s item moved from `old` to `new`: its watches follow (the new ones first,
    /// so that a moved folder keeps its inotify watch).
    func follow(_ id: Int, from old: String, to new: String, tree: FolderTree?) {
        state.withLock { $0.registrations[id]?.path = new }
        watchItem(id, at: new)
        for folder in tree?.folders ?? [] { watches.want(inside: FolderTree.absolute(folder, in: new), for: id, refresh: true) }
        unwatch(id, at: old, tree: tree)
    }

    // MARK: Polling

    /// Starts the poll loop, unless it runs.
    func startPolling() {
        let start = state.withLock { state -> Bool in
            guard !state.polling else { return false }
            state.polling = true
            return true
        }
        if start { schedulePoll() }
    }

    private func schedulePoll() {
        queue.asyncAfter(deadline: .now() + watches.options.dispatchInterval) { [weak self] in self?.poll() }
    }

    /// Looks at every polled folder as if an event had named everything in it.
    private func poll() {
        let folders = watches.polledFolders
        guard !folders.isEmpty else {
            state.withLock { $0.polling = false }
            if !watches.polledFolders.isEmpty { startPolling() }
            return
        }
        handle(folders.map(FileWatcher.Event.look(at:)), overflowed: false, read: nil)
        schedulePoll()
    }

    // MARK: Paths

    /// The item at `path` as a presenter compares it: a file or package with its contents, a folder by identity.
    static func snapshot(of path: String, isPackage: Bool) -> ItemSnapshot {
        let identity = ItemSnapshot.read(path, depth: .identity)
        guard identity.isDirectory, isPackage else { return identity }
        return ItemSnapshot.read(path, depth: .contents)
    }

    /// The folder holding the item at `path`.
    static func folder(of path: String) -> String { ItemPath.parent(of: path) }

    /// `folder` relative to `root` ("" for `root` itself), if it is in it.
    static func relative(_ folder: String, in root: String) -> String? {
        if folder == root { return "" }
        guard folder.hasPrefix(root), folder.dropFirst(root.count).first == "/" else { return nil }
        return String(folder.dropFirst(root.count + 1))
    }
}
