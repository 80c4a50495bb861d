#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FileCoordination
import Dispatch
import Synchronization
import SystemPackage

/// The names in the document folders of version stores that this process lists again and
/// again (a conflict count at every change a server or an index sees, a save's look for
/// leftovers), kept current by inotify instead of a `getdents` of every version each time.
///
/// A folder is listed once, after its watch was added; from then on every name an event names
/// (made, removed, renamed in or out, exchanged: by any process, as inotify reports the changes
/// of the whole machine on a local file system) is looked at with one `fstatat` before the next
/// answer: there, with its inode number, or not. The events of every change that returned before
/// the answer began are queued by then. The folder is listed again when the queue overflowed or
/// could not be read, when its path now names another folder, when the watch ended (the folder
/// removed, its file system unmounted), when a name can't be looked at or is not UTF-8, or when
/// it holds, or was changed by, more than ``maximumNames`` names since it was asked. (An inode
/// number from `fstatat` may differ from the listing's `d_ino` on overlayfs without `xino`: a
/// count then reads that version's record again, nothing worse.)
///
/// Not used on network, cluster or FUSE file systems (their changes from elsewhere raise no
/// event), nor through a ``FileSystem`` that injects faults (tests of the listing's failures
/// must reach the listing). A folder is watched from the second time it is asked for while still
/// among the last `2 × limit` asked (an index's scan of every document watches none); at most
/// ``limit`` folders are watched (the least recently asked is dropped), a folder of more than
/// ``maximumNames`` names is not kept, and after the kernel refused a watch or an instance
/// (its limits are shared with the library index and the presenters) none is tried for a minute.
final class WatchedFolderNames: Sendable {
    /// The process's folders (one inotify instance, made at the first use).
    static let shared = WatchedFolderNames()

    /// Folders watched at most.
    let limit: Int
    /// Names a folder may hold to be kept.
    let maximumNames: Int
    /// How many changed names a folder keeps for callers' cursors (at least; at most twice as many).
    let logLimit: Int

    /// What tests inject: a failing `inotify_init1` or `inotify_add_watch`.
    struct Faults: Sendable {
        var initialization: Errno?
        var addWatch: Errno?
    }

    private struct Folder {
        var watch: CInt
        var device: UInt64
        var inode: UInt64
        /// Every name in the folder, with its inode number, as of the last answer.
        var names: [String: UInt64]
        /// Names made, removed or renamed since the last answer: looked at (`fstatat`) at the next one.
        var pending: Set<String> = []
        var lastUse: UInt64
        /// This watch's listing among all the process's (a ``Cursor`` of another is of no use here).
        var epoch: UInt64
        /// The names looked at by the answers, in order (the latest ``logLimit`` or more): the
        /// changes a caller's ``Cursor`` has not seen. `log[0]` is the `logStart`-th name looked at.
        var log: [String] = []
        var logStart: UInt64 = 0

        var cursor: Cursor { Cursor(epoch: epoch, position: logStart + UInt64(log.count)) }

        /// The names looked at since `cursor`; nil when it is of another listing or older than the log.
        func changes(since cursor: Cursor?) -> ArraySlice<String>? {
            guard let cursor, cursor.epoch == epoch, cursor.position >= logStart,
                cursor.position <= logStart + UInt64(log.count)
            else { return nil }
            return log[Int(cursor.position - logStart)...]
        }
    }

    /// Where an answer left a caller: the next answer tells the names changed since
    /// (``Answer/changed``) while the folder stays watched and has not been listed again.
    struct Cursor: Sendable, Equatable {
        fileprivate var epoch: UInt64
        fileprivate var position: UInt64
    }

    /// The names of a folder as a listing would give them now, or what changed since a cursor.
    struct Answer {
        enum Names {
            /// Every name with its inode number (`d_ino`).
            case all([String: UInt64])
            /// The names made, removed, renamed or exchanged since the cursor asked with, each with
            /// its inode number now, or nil where it is gone (a name appears once).
            case changed([String: UInt64?])
        }

        var names: Names
        /// Where this answer leaves the caller; nil when the folder is not kept watched.
        var cursor: Cursor?
    }

    private struct State {
        /// The inotify instance: nil until first used, -1 when it can't be made.
        var descriptor: CInt?
        var folders: [String: Folder] = [:]
        var paths: [CInt: String] = [:]
        var uses: UInt64 = 0
        /// Listings made with a watch (each folder kept gets the next as its ``Folder/epoch``).
        var epochs: UInt64 = 0
        /// How many times a folder was listed (for tests: a kept folder is not).
        var listings = 0
        /// The folders asked for lately and not watched: one asked again is watched.
        var recent: RecentPaths
        /// When adding a watch or making the instance last failed (nanoseconds, monotonic):
        /// none is tried for a minute after (the kernel's limits are shared with the index and presenters).
        var refusedAt: UInt64?
    }

    private let state: Mutex<State>
    private let faults: Faults

    init(limit: Int = 256, maximumNames: Int = 100_000, logLimit: Int = 4_096, faults: Faults = Faults()) {
        self.limit = limit
        self.maximumNames = maximumNames
        self.logLimit = max(1, logLimit)
        self.faults = faults
        state = Mutex(State(recent: RecentPaths(limit: 2 * limit)))
    }

    deinit {
        state.withLock { state in
            if let fd = state.descriptor, fd >= 0 { close(fd) }
        }
    }

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
        | UInt32(IN_ONLYDIR)

    /// The names in the folder at `path` with their inode numbers (`d_ino`), as a listing would
    /// give them now; nil when the folder can't be watched or listed here (the caller lists it).
    func entries(ofFolderAt path: String, using fileSystem: FileSystem) -> [String: UInt64]? {
        guard case .all(let names)? = answer(ofFolderAt: path, using: fileSystem, since: nil)?.names else { return nil }
        return names
    }

    /// ``entries(ofFolderAt:using:)``, or only the names changed since `cursor` (an earlier
    /// answer's) when they can be told (the folder stayed watched, not listed again, and changed
    /// by at most ``logLimit`` names since): what a caller that keeps its own summary of the
    /// folder (a conflict count) needs to bring it up to date without a pass over every name.
    func answer(ofFolderAt path: String, using fileSystem: FileSystem, since cursor: Cursor?) -> Answer? {
        guard fileSystem.interceptor == nil else { return nil }
        // Outside the lock: a hung network file system blocks its own callers only (`statfs` per call).
        guard let status = try? fileSystem.status(of: path, in: AT_FDCWD, followingLink: true), status.kind == .directory,
            RemoteFileSystems.name(at: path) == nil
        else {
            state.withLock { state in
                if let fd = state.descriptor, fd >= 0 { drop(path, in: &state, fd: fd) }
            }
            return nil
        }
        return state.withLock { state -> Answer? in
            guard let fd = descriptor(in: &state) else { return nil }
            drain(fd, into: &state)
            state.uses += 1
            // Taken out while changed: a copy left in the table would make the change copy every name.
            if var folder = state.folders.removeValue(forKey: path) {
                if folder.device == status.device, folder.inode == status.inode, resolvePending(of: &folder, at: path, using: fileSystem),
                    folder.names.count <= maximumNames
                {
                    folder.lastUse = state.uses
                    let answer: Answer
                    if let changes = folder.changes(since: cursor) {
                        var changed = [String: UInt64?](minimumCapacity: changes.count)
                        for name in changes { changed[name] = .some(folder.names[name]) }
                        answer = Answer(names: .changed(changed), cursor: folder.cursor)
                    } else {
                        answer = Answer(names: .all(folder.names), cursor: folder.cursor)
                    }
                    state.folders[path] = folder
                    return answer
                }
                // Another folder at the path now, a name that can't be looked at, or too many names.
                state.paths[folder.watch] = nil
                inotify_rm_watch(fd, folder.watch)
            }
            // A folder asked for once (an index's scan of every document) is listed, not watched:
            // it is watched when asked again while still among the last ones asked.
            guard state.recent.note(path) else { return nil }
            return watchAndList(path, fd: fd, status: status, using: fileSystem, in: &state)
        }
    }

    /// Notes that `name` was looked at in `folder` (for the callers' cursors), keeping the log bounded.
    private func noteChange(of name: String, in folder: inout Folder) {
        folder.log.append(name)
        if folder.log.count > 2 * logLimit {
            let dropped = folder.log.count - logLimit
            folder.log.removeFirst(dropped)
            folder.logStart += UInt64(dropped)
        }
    }

    /// Looks at the names events named since the last answer: there (with its inode number) or
    /// not. False when one can't be looked at (the folder is listed again).
    private func resolvePending(of folder: inout Folder, at path: String, using fileSystem: FileSystem) -> Bool {
        for name in folder.pending {
            noteChange(of: name, in: &folder)
            do throws(Errno) {
                folder.names[name] = try fileSystem.status(of: path + "/" + name, in: AT_FDCWD).inode
            } catch .noSuchFileOrDirectory {
                // Removed since: its event is queued, and applies to the same end.
                folder.names[name] = nil
            } catch {
                return false
            }
        }
        folder.pending = []
        return true
    }

    /// How many folders are watched, and how many listings were taken (for tests).
    var counts: (folders: Int, listings: Int) { state.withLock { ($0.folders.count, $0.listings) } }

    private func descriptor(in state: inout State) -> CInt? {
        if let fd = state.descriptor, fd >= 0 { return fd }
        if let refused = state.refusedAt, Self.now() - refused < Self.retryAfter { return nil }
        let fd = faults.initialization == nil ? inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) : -1
        guard fd >= 0 else {
            state.refusedAt = Self.now()
            return nil
        }
        state.descriptor = fd
        return fd
    }

    /// How long nothing is tried after the kernel refused a watch or an instance: a minute.
    private static let retryAfter: UInt64 = 60_000_000_000

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Adds the watch first, then lists: a change made in between is in both, applied twice to
    /// the same end (a name made is looked at again; a name removed is gone from the listing).
    private func watchAndList(
        _ path: String, fd: CInt, status: FileStatus, using fileSystem: FileSystem, in state: inout State
    ) -> Answer? {
        if let refused = state.refusedAt, Self.now() - refused < Self.retryAfter { return nil }
        let watch = faults.addWatch == nil ? inotify_add_watch(fd, path, Self.mask) : -1
        guard watch >= 0 else {
            // The kernel's limit (ENOSPC: `max_user_watches`), not a folder gone in between.
            if faults.addWatch != nil || errno == ENOSPC || errno == ENOMEM { state.refusedAt = Self.now() }
            return nil
        }
        // Another path of the same folder (a bind mount, a link to it) shares the watch: not kept twice.
        if let other = state.paths[watch], other != path {
            return nil
        }
        state.listings += 1
        guard let folder = try? fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY) else {
            inotify_rm_watch(fd, watch)
            return nil
        }
        let descriptor = Descriptor(owning: folder)
        guard let opened = try? fileSystem.status(of: descriptor.rawValue, name: path), opened.device == status.device,
            opened.inode == status.inode,
            let listed = try? fileSystem.inodesOfDirectory(descriptor.rawValue, name: path)
        else {
            inotify_rm_watch(fd, watch)
            return nil
        }
        // The watch must be the listed folder's (one replaced and put back in between is not):
        // adding it again gives the same descriptor only for the same folder.
        var names = [String: UInt64](minimumCapacity: listed.count)
        for (name, inode) in listed { names[name] = inode }
        let again = listed.count <= maximumNames ? inotify_add_watch(fd, path, Self.mask) : watch
        guard again == watch else {
            inotify_rm_watch(fd, watch)
            if again >= 0, state.paths[again] == nil { inotify_rm_watch(fd, again) }
            return Answer(names: .all(names))
        }
        guard listed.count <= maximumNames else {
            inotify_rm_watch(fd, watch)
            return Answer(names: .all(names))
        }
        if state.folders.count >= limit, let oldest = state.folders.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            drop(oldest, in: &state, fd: fd)
        }
        state.recent.remove(path)
        state.epochs += 1
        let kept = Folder(watch: watch, device: status.device, inode: status.inode, names: names, lastUse: state.uses, epoch: state.epochs)
        state.folders[path] = kept
        state.paths[watch] = path
        return Answer(names: .all(names), cursor: kept.cursor)
    }

    private func drop(_ path: String, in state: inout State, fd: CInt, watchEnded: Bool = false) {
        guard let folder = state.folders.removeValue(forKey: path) else { return }
        state.paths[folder.watch] = nil
        if !watchEnded { inotify_rm_watch(fd, folder.watch) }
    }

    /// Applies every queued event to the folders it names.
    private func drain(_ fd: CInt, into state: inout State) {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, size)
            guard count > 0 else {
                // Anything but "nothing queued" may have lost events: every folder is listed again.
                if count < 0, errno != EAGAIN, errno != EINTR {
                    for path in Array(state.folders.keys) { drop(path, in: &state, fd: fd) }
                }
                if count < 0, errno == EINTR { continue }
                return
            }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                offset = nameStart + Int(event.len)
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    for path in Array(state.folders.keys) { drop(path, in: &state, fd: fd) }
                    continue
                }
                guard let path = state.paths[event.wd] else { continue }
                if event.mask & UInt32(IN_IGNORED | IN_UNMOUNT) != 0 {
                    drop(path, in: &state, fd: fd, watchEnded: true)
                    continue
                }
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    drop(path, in: &state, fd: fd)
                    continue
                }
                guard event.len > 0 else { continue }
                // A name that is not UTF-8 is listed as the listing repairs it: the folder is listed again.
                guard let name = String(validatingCString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self)) else {
                    drop(path, in: &state, fd: fd)
                    continue
                }
                // Whatever happened to the name (an exchange of two names queues "moved from" and "moved
                // to" for each), it is looked at when the next answer is made: there or not, and its inode.
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) != 0 {
                    state.folders[path]?.pending.insert(name)
                    // A folder changed far more than it is asked for is listed when next asked.
                    if (state.folders[path]?.pending.count ?? 0) > maximumNames { drop(path, in: &state, fd: fd) }
                }
            }
        }
    }
}

/// The paths asked for lately, oldest dropped first (``WatchedFolderNames``: a folder is watched
/// when asked for again while still here).
struct RecentPaths: Sendable {
    let limit: Int
    private var paths: Set<String> = []
    private var order: [String] = []
    private var start = 0

    init(limit: Int) { self.limit = max(1, limit) }

    /// Notes that `path` was asked for; whether it was here already (then it stays where it was).
    mutating func note(_ path: String) -> Bool {
        if paths.contains(path) { return true }
        paths.insert(path)
        order.append(path)
        while paths.count > limit, start < order.count {
            paths.remove(order[start])
            start += 1
        }
        // Names removed (watched since) or dropped stay in the order until it is compacted.
        if order.count - start > 2 * limit || start > limit {
            var seen = Set<String>()
            // A path noted again keeps its latest place.
            order = Array(order[start...].reversed().filter { paths.contains($0) && seen.insert($0).inserted }.reversed())
            start = 0
        }
        return false
    }

    mutating func remove(_ path: String) { paths.remove(path) }
}
