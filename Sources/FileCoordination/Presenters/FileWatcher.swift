#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// One inotify instance for a process's presenters: watches folders, and tells the registry
/// which paths something happened to.
///
/// A reader thread blocks on the inotify descriptor. Events name a watched folder and an entry;
/// renames come as pairs with a shared cookie, which are kept so a missing item can be found
/// again under its new name. A queue overflow asks for everything to be looked at again.
final class FileWatcher: Sendable {
    struct Event: Sendable {
        /// The folder the event happened in.
        let folder: String
        /// The entry's name, if the event names one.
        let name: String?
        let mask: UInt32
        let cookie: UInt32
    }

    private struct State {
        var folders: [CInt: String] = [:]
        var descriptors: [String: CInt] = [:]
        /// Rename halves by cookie: (from folder/name, to folder/name).
        var renames: [UInt32: (from: String?, to: String?)] = [:]
    }

    private let fd: CInt
    private let state = Mutex(State())
    private let deliver: @Sendable ([Event], _ overflowed: Bool) -> Void

    init(deliver: @escaping @Sendable ([Event], _ overflowed: Bool) -> Void) {
        self.fd = inotify_init1(Int32(IN_CLOEXEC))
        self.deliver = deliver
        guard fd >= 0 else { return }
        let thread = Thread { [self] in self.readLoop() }
        thread.name = "DocumentKit.FileWatcher"
        thread.start()
    }

    var isAvailable: Bool { fd >= 0 }

    static let folderMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_MODIFY | IN_DELETE_SELF
            | IN_MOVE_SELF) | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW) | UInt32(IN_EXCL_UNLINK)

    /// Watches the folder at `path` (again, if it is now another folder). Returns false if
    /// inotify refused (no such folder, or out of watches — see `fs.inotify.max_user_watches`).
    @discardableResult
    func watch(_ path: String) -> Bool {
        guard fd >= 0 else { return false }
        let wd = inotify_add_watch(fd, path, Self.folderMask)
        guard wd >= 0 else { return false }
        state.withLock { state in
            state.folders[wd] = path
            state.descriptors[path] = wd
        }
        return true
    }

    /// Stops watching the folder at `path`.
    func unwatch(_ path: String) {
        let wd = state.withLock { state -> CInt? in
            guard let wd = state.descriptors.removeValue(forKey: path) else { return nil }
            if state.folders[wd] == path { state.folders.removeValue(forKey: wd) }
            return wd
        }
        if let wd { inotify_rm_watch(fd, wd) }
    }

    /// Where the rename with the entry `path` as its source went, if the watcher saw both halves.
    func destination(ofRenameFrom path: String) -> String? {
        state.withLock { state in
            state.renames.values.first { $0.from == path && $0.to != nil }?.to ?? nil
        }
    }

    /// Forgets rename halves older than the last evaluation.
    func forgetRenames() { state.withLock { $0.renames.removeAll() } }

    private func readLoop() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, capacity)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            var events: [Event] = []
            var overflowed = false
            var offset = 0
            state.withLock { state in
                while offset < count {
                    let header = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    let nameLength = Int(header.len)
                    var name: String?
                    if nameLength > 0 {
                        let start = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self)
                        name = String(cString: start)
                    }
                    offset += MemoryLayout<inotify_event>.size + nameLength
                    if header.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true; continue }
                    guard let folder = state.folders[header.wd] else { continue }
                    if header.mask & UInt32(IN_IGNORED) != 0 {
                        state.folders.removeValue(forKey: header.wd)
                        if state.descriptors[folder] == header.wd { state.descriptors.removeValue(forKey: folder) }
                        continue
                    }
                    if let name, header.cookie != 0 {
                        let path = folder + "/" + name
                        var halves = state.renames[header.cookie] ?? (nil, nil)
                        if header.mask & UInt32(IN_MOVED_FROM) != 0 { halves.from = path }
                        if header.mask & UInt32(IN_MOVED_TO) != 0 { halves.to = path }
                        state.renames[header.cookie] = halves
                    }
                    events.append(Event(folder: folder, name: name, mask: header.mask, cookie: header.cookie))
                }
            }
            if !events.isEmpty || overflowed { deliver(events, overflowed) }
        }
    }
}
