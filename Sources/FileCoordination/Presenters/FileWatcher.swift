#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization
import SystemPackage

/// One inotify instance for a namespace's presenters: watches folders, and tells the registry
/// what happened in which of them.
///
/// A reader thread waits in poll(2) on the inotify descriptor and on an eventfd that stops or
/// pauses it. Events name a watched folder and an entry; rename halves share a cookie and are
/// kept (when asked), so an item that left one name can be found under its new one. Files created or
/// modified and not yet closed are known as being written, so that a half-written file is not
/// taken for a change of its own. A queue overflow is reported as such: everything must be
/// looked at again.
package final class FileWatcher: Sendable {
    package struct Event: Sendable {
        /// The folder the event happened in.
        package let folder: String
        /// The entry's name; nil means "anything in the folder" (a poll).
        package let name: String?
        package let mask: UInt32
        let cookie: UInt32

        /// A made-up event asking to look at everything in `folder` (what polling sends).
        static func look(at folder: String) -> Event { Event(folder: folder, name: nil, mask: 0, cookie: 0) }
    }

    /// Failures to inject, for tests: an errno for `inotify_init1`, or for `inotify_add_watch` of some folders.
    package struct Faults: Sendable {
        var initialization: Errno?
        var addWatch: (@Sendable (String) -> Errno?)?

        /// No failures.
        package init() {}
    }

    /// What the reader hands over: the events of one read, whether the kernel's queue
    /// overflowed, and the number of that read (rename halves are kept per read).
    package typealias Deliver = @Sendable (_ events: [Event], _ overflowed: Bool, _ read: Int) -> Void

    private struct Rename {
        var from: String?
        var to: String?
        var read: Int
    }

    private struct State {
        /// Watch descriptor → the paths it was added for (the last is where the folder is now).
        var paths: [CInt: [String]] = [:]
        var descriptors: [String: CInt] = [:]
        var renames: [UInt32: Rename] = [:]
        /// Files being written (created or modified, not closed yet), with when that began.
        var writing: [String: UInt64] = [:]
        var reads = 0
        var overflows = 0
        var closed = false
        var stopping = false
        /// Set while a test holds the reader; signalled once it is parked.
        var pause: DispatchSemaphore?
    }

    private let fd: CInt
    private let wakeFD: CInt
    private let faults: Faults
    private let state = Mutex(State())
    private let resumed = DispatchSemaphore(value: 0)
    private let deliver: Deliver
    private let keepsRenames: Bool
    /// Rename halves kept at most (a client that never forgets them, or renames nobody asks about):
    /// beyond it, halves older than the last ``keptReads`` reads are dropped, and if that is not
    /// enough (a reader that fell behind reads thousands at once), all but the newest half of it.
    static let renameLimit = 4_096
    static let keptReads = 64

    static let folderMask =
        UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_MODIFY)
        | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW) | UInt32(IN_EXCL_UNLINK)

    /// Starts a watcher; throws the errno of `inotify_init1` (EMFILE: `fs.inotify.max_user_instances`).
    /// With `keepsRenames`, rename halves are kept for ``destination(ofRenameFrom:)`` until
    /// ``forgetRenames(through:)``; without, none are (a client that never asks must not pay for them).
    package init(keepsRenames: Bool = false, faults: Faults = Faults(), deliver: @escaping Deliver) throws(Errno) {
        if let injected = faults.initialization { throw injected }
        let fd = inotify_init1(Int32(IN_CLOEXEC))
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        let wakeFD = dk_eventfd()
        guard wakeFD >= 0 else {
            let failure = Errno(rawValue: errno)
            close(fd)
            throw failure
        }
        self.fd = fd
        self.wakeFD = wakeFD
        self.faults = faults
        self.deliver = deliver
        self.keepsRenames = keepsRenames
        startThread(named: "dk.watcher") { [self] in self.readLoop() }
    }

    /// Watches the folder at `path` (again, if it is now another folder). Throws the errno of
    /// `inotify_add_watch` (ENOSPC: `fs.inotify.max_user_watches`; ENOENT: no such folder).
    package func watch(_ path: String) throws(Errno) {
        let failure = state.withLock { state -> Errno? in
            guard !state.closed else { return .badFileDescriptor }
            if let injected = faults.addWatch?(path) { return injected }
            let wd = inotify_add_watch(fd, path, Self.folderMask)
            guard wd >= 0 else { return Errno(rawValue: errno) }
            if let old = state.descriptors[path], old != wd { detach(path, from: old, in: &state) }
            state.descriptors[path] = wd
            state.paths[wd, default: []].removeAll { $0 == path }
            state.paths[wd, default: []].append(path)
            return nil
        }
        if let failure { throw failure }
    }

    /// Stops watching the folder at `path` (the watch stays while another path still names it).
    package func unwatch(_ path: String) {
        state.withLock { state in
            guard !state.closed, let wd = state.descriptors.removeValue(forKey: path) else { return }
            detach(path, from: wd, in: &state)
        }
    }

    private func detach(_ path: String, from wd: CInt, in state: inout State) {
        state.paths[wd]?.removeAll { $0 == path }
        guard state.paths[wd]?.isEmpty ?? true else { return }
        state.paths.removeValue(forKey: wd)
        inotify_rm_watch(fd, wd)
    }

    /// Where the rename with the entry `path` as its source went, if the watcher saw both halves.
    func destination(ofRenameFrom path: String) -> String? {
        state.withLock { state in
            state.renames.values.first { $0.from == path && $0.to != nil }?.to ?? nil
        }
    }

    /// How many rename halves the watcher holds (for tests: it must stay bounded).
    var keptRenameCount: Int { state.withLock { $0.renames.count } }

    /// Forgets rename halves of reads up to `read` (their events have been evaluated).
    func forgetRenames(through read: Int) {
        state.withLock { state in state.renames = state.renames.filter { $0.value.read > read } }
    }

    /// Whether the file at `path` is being written: created or modified less than `window` ago
    /// and not closed since.
    func isBeingWritten(_ path: String, window: DispatchTimeInterval) -> Bool {
        guard let began = state.withLock({ $0.writing[path] }) else { return false }
        return DispatchTime(uptimeNanoseconds: began) + window > .now()
    }

    /// How many times the kernel's event queue overflowed.
    var overflowCount: Int { state.withLock { $0.overflows } }

    /// Stops reading until ``resume()``: events queue up in the kernel (and overflow past
    /// `fs.inotify.max_queued_events`). Returns once the reader is parked. For tests.
    func pause() {
        let parked = DispatchSemaphore(value: 0)
        state.withLock { $0.pause = parked }
        wake()
        parked.wait()
    }

    /// Lets a paused reader go on.
    func resume() { resumed.signal() }

    /// Ends the reader thread and closes the descriptors (a paused reader is let go first).
    package func stop() {
        state.withLock { $0.stopping = true }
        wake()
        resumed.signal()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    private func readLoop() {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer {
            buffer.deallocate()
            state.withLock { state in
                state.closed = true
                close(fd)
                close(wakeFD)
            }
        }
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            if poll(&descriptors, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, MemoryLayout<UInt64>.size)
                let (stopping, pause) = state.withLock { state in
                    defer { state.pause = nil }
                    return (state.stopping, state.pause)
                }
                if stopping { return }
                if let pause {
                    pause.signal()
                    resumed.wait()
                }
                continue
            }
            guard descriptors[0].revents != 0 else { continue }
            let count = read(fd, buffer, capacity)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            let (events, overflowed, read) = parse(buffer, count: count)
            if !events.isEmpty || overflowed { deliver(events, overflowed, read) }
        }
    }

    private func noteWriting(_ path: String, _ mask: UInt32, in state: inout State) {
        if mask & UInt32(IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM) != 0 {
            state.writing.removeValue(forKey: path)
        } else if mask & UInt32(IN_ISDIR) == 0, mask & UInt32(IN_MODIFY | IN_CREATE) != 0, state.writing[path] == nil {
            let now = DispatchTime.now().uptimeNanoseconds
            // Writers that never close: keep the map small.
            if state.writing.count >= 4_096 { state.writing = Self.recentWriters(state.writing, now: now) }
            state.writing[path] = now
        }
    }

    /// The entries of `writing` (path → when its writing began, in uptime nanoseconds) that
    /// began less than 10 s before `now`. Nothing is subtracted below zero: on a clock younger
    /// than 10 s (a machine just booted), every entry is recent.
    static func recentWriters(_ writing: [String: UInt64], now: UInt64) -> [String: UInt64] {
        writing.filter { now - min($0.value, now) < 10_000_000_000 }
    }

    private func parse(_ buffer: UnsafeMutableRawPointer, count: Int) -> ([Event], Bool, Int) {
        state.withLock { state in
            state.reads += 1
            var events: [Event] = []
            var overflowed = false
            var offset = 0
            while offset < count {
                let header = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(header.len)
                var name: String?
                if nameLength > 0 {
                    let start = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self)
                    name = String(cString: start)
                }
                offset += MemoryLayout<inotify_event>.size + nameLength
                if header.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    overflowed = true
                    state.overflows += 1
                    continue
                }
                guard let folder = state.paths[header.wd]?.last else { continue }
                if header.mask & UInt32(IN_IGNORED) != 0 {
                    for path in state.paths.removeValue(forKey: header.wd) ?? [] where state.descriptors[path] == header.wd {
                        state.descriptors.removeValue(forKey: path)
                    }
                    continue
                }
                if let name { noteWriting(folder + "/" + name, header.mask, in: &state) }
                if keepsRenames, let name, header.cookie != 0 {
                    let path = folder + "/" + name
                    var halves = state.renames[header.cookie] ?? Rename(read: state.reads)
                    if header.mask & UInt32(IN_MOVED_FROM) != 0 { halves.from = path }
                    if header.mask & UInt32(IN_MOVED_TO) != 0 { halves.to = path }
                    halves.read = state.reads
                    state.renames[header.cookie] = halves
                    if state.renames.count > Self.renameLimit {
                        let oldest = state.reads - Self.keptReads
                        state.renames = state.renames.filter { $0.value.read > oldest }
                        // A reader that fell behind reads thousands of renames at once: the
                        // newest half of the limit stays (by read, then cookie: the kernel's
                        // cookies count up).
                        if state.renames.count > Self.renameLimit {
                            let newest = state.renames.sorted { ($0.value.read, $0.key) > ($1.value.read, $1.key) }
                            state.renames = Dictionary(uniqueKeysWithValues: newest.prefix(Self.renameLimit / 2).map { ($0.key, $0.value) })
                        }
                    }
                }
                events.append(Event(folder: folder, name: name, mask: header.mask, cookie: header.cookie))
            }
            return (events, overflowed, state.reads)
        }
    }
}
