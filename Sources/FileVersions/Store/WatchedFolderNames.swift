#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FileCoordination
import Synchronization
import SystemPackage

/// The names in the document folders of version stores that this process lists again and
/// again (a conflict count at every change a server or an index sees, a save's look for
/// leftovers), kept current by inotify instead of a `getdents` of every version each time.
///
/// A folder is listed once, after its watch was added; from then on every name made or removed
/// in it (by any process: inotify reports the changes of the whole machine on a local file
/// system) is applied to what was listed, before each answer: the events of every change that
/// returned before the answer began are queued by then. A new name's inode number is taken with
/// one `fstatat`. The folder is listed again when the queue overflowed, when its path now names
/// another folder, or when the watch ended (the folder removed, its file system unmounted).
///
/// Not used on network, cluster or FUSE file systems (their changes from elsewhere raise no
/// event), nor through a ``FileSystem`` that injects faults (tests of the listing's failures
/// must reach the listing). At most ``limit`` folders are watched (the least recently asked
/// is dropped) and a folder of more than ``maximumNames`` names is not kept.
final class WatchedFolderNames: Sendable {
    /// The process's folders (one inotify instance, made at the first use).
    static let shared = WatchedFolderNames()

    /// Folders watched at most.
    let limit: Int
    /// Names a folder may hold to be kept.
    let maximumNames: Int

    /// What tests inject: a failing `inotify_init1` or `inotify_add_watch`.
    struct Faults: Sendable {
        var initialization: Errno?
        var addWatch: Errno?
    }

    private struct Folder {
        var watch: CInt
        var device: UInt64
        var inode: UInt64
        /// Every name in the folder, with its inode number (0 until `fstatat` told it: `pending`).
        var names: [String: UInt64]
        /// Names made since they were last looked at: their inode numbers are taken at the next answer.
        var pending: Set<String> = []
        var lastUse: UInt64
    }

    private struct State {
        /// The inotify instance: nil until first used, -1 when it can't be made.
        var descriptor: CInt?
        var folders: [String: Folder] = [:]
        var paths: [CInt: String] = [:]
        var uses: UInt64 = 0
        /// How many times a folder was listed (for tests: a kept folder is not).
        var listings = 0
        /// Whether the file system of a device is remote (looked up once per device).
        var remoteDevices: [UInt64: Bool] = [:]
    }

    private let state = Mutex(State())
    private let faults: Faults

    init(limit: Int = 256, maximumNames: Int = 100_000, faults: Faults = Faults()) {
        self.limit = limit
        self.maximumNames = maximumNames
        self.faults = faults
    }

    deinit {
        state.withLock { state in
            if let fd = state.descriptor, fd >= 0 { Glibc.close(fd) }
        }
    }

    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
        | UInt32(IN_ONLYDIR)

    /// The names in the folder at `path` with their inode numbers (`d_ino`), as a listing would
    /// give them now; nil when the folder can't be watched or listed here (the caller lists it).
    func entries(ofFolderAt path: String, using fileSystem: FileSystem) -> [(name: String, inode: UInt64)]? {
        guard fileSystem.interceptor == nil else { return nil }
        return state.withLock { state -> [(name: String, inode: UInt64)]? in
            guard let fd = descriptor(in: &state) else { return nil }
            drain(fd, into: &state)
            guard let status = try? fileSystem.status(of: path, in: AT_FDCWD, followingLink: true), status.kind == .directory else {
                drop(path, in: &state, fd: fd)
                return nil
            }
            state.uses += 1
            if var folder = state.folders[path], folder.device == status.device, folder.inode == status.inode {
                for name in folder.pending {
                    do throws(Errno) {
                        folder.names[name] = try fileSystem.status(of: path + "/" + name, in: AT_FDCWD).inode
                    } catch .noSuchFileOrDirectory {
                        // Removed since: its event is queued, and applies to the same end.
                        folder.names[name] = nil
                    } catch {
                        drop(path, in: &state, fd: fd)
                        return nil
                    }
                }
                folder.pending = []
                folder.lastUse = state.uses
                state.folders[path] = folder
                return folder.names.map { ($0.key, $0.value) }
            }
            drop(path, in: &state, fd: fd)
            return watchAndList(path, fd: fd, status: status, using: fileSystem, in: &state)
        }
    }

    /// How many folders are watched, and how many listings were taken (for tests).
    var counts: (folders: Int, listings: Int) { state.withLock { ($0.folders.count, $0.listings) } }

    private func descriptor(in state: inout State) -> CInt? {
        if state.descriptor == nil {
            if faults.initialization != nil {
                state.descriptor = -1
            } else {
                let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
                state.descriptor = fd >= 0 ? fd : -1
            }
        }
        guard let fd = state.descriptor, fd >= 0 else { return nil }
        return fd
    }

    /// Adds the watch first, then lists: a change made in between is in both, applied twice to
    /// the same end (a name made is looked at again; a name removed is gone from the listing).
    private func watchAndList(
        _ path: String, fd: CInt, status: FileStatus, using fileSystem: FileSystem, in state: inout State
    ) -> [(name: String, inode: UInt64)]? {
        if state.remoteDevices[status.device] == nil { state.remoteDevices[status.device] = RemoteFileSystems.name(at: path) != nil }
        if state.remoteDevices[status.device] == true { return nil }
        if state.folders.count >= limit, let oldest = state.folders.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            drop(oldest, in: &state, fd: fd)
        }
        guard faults.addWatch == nil else { return nil }
        let watch = inotify_add_watch(fd, path, Self.mask)
        guard watch >= 0 else { return nil }
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
        guard listed.count <= maximumNames else {
            inotify_rm_watch(fd, watch)
            return listed
        }
        var names = [String: UInt64](minimumCapacity: listed.count)
        for (name, inode) in listed { names[name] = inode }
        state.folders[path] = Folder(watch: watch, device: status.device, inode: status.inode, names: names, lastUse: state.uses)
        state.paths[watch] = path
        return listed
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
            let count = Glibc.read(fd, buffer, size)
            guard count > 0 else { return }
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
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    state.folders[path]?.names[name] = 0
                    state.folders[path]?.pending.insert(name)
                } else if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                    state.folders[path]?.names[name] = nil
                    state.folders[path]?.pending.remove(name)
                }
            }
        }
    }
}
