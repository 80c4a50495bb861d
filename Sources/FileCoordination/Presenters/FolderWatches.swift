import DocumentKitSystem
import Foundation
import Logging
import Synchronization
import SystemPackage

/// The folders a namespace's presenters need watched, who needs each, and how each is watched:
/// by inotify, by polling, or both.
///
/// A folder is needed as the parent of presented items (an event there matters to the presenters
/// of the entry it names) or as a folder inside a presented folder or package (every event there
/// matters). Its inotify watch is added when the first presenter needs it and removed with the
/// last; the inotify instance itself lives while any folder is needed. Folders on remote file
/// systems are polled as well; folders the kernel refuses to watch (and all folders, when inotify
/// cannot start or polling is forced) are polled instead, with one warning naming the limit.
final class FolderWatches: Sendable {
    /// Whom an event concerns.
    enum Concern: Sendable {
        /// The presented item of a registration: the event named it in its folder.
        case item(Int)
        /// Something inside a registration's presented folder or package.
        case inside(Int, folder: String, name: String?)
    }

    /// What tests replace: injected inotify failures, the remote file system check, the logger.
    struct Hooks: Sendable {
        var faults = FileWatcher.Faults()
        var remoteFileSystem: @Sendable (String) -> String? = RemoteFileSystems.name(at:)
        var logger = Logger(label: "DocumentKit.presenters")
    }

    /// The registrations presenting one entry: almost always one, kept without an allocation.
    private enum IDs {
        case one(Int)
        case many([Int])

        var all: [Int] {
            switch self {
            case .one(let id): [id]
            case .many(let ids): ids
            }
        }

        func forEach(_ body: (Int) -> Void) {
            switch self {
            case .one(let id): body(id)
            case .many(let ids): ids.forEach(body)
            }
        }

        func adding(_ id: Int) -> IDs { .many(all + [id]) }

        /// Without (one occurrence of) `id`; nil when none is left.
        func removing(_ id: Int) -> IDs? {
            var ids = all
            if let index = ids.firstIndex(of: id) { ids.remove(at: index) }
            return ids.count > 1 ? .many(ids) : ids.first.map { .one($0) }
        }
    }

    private struct Folder {
        /// Registrations presenting an entry of the folder, by the entry's name.
        var items: [String: IDs] = [:]
        /// Registrations presenting a folder or package this folder is in (or is).
        var insides: Set<Int> = []
        var isEmpty: Bool { items.isEmpty && insides.isEmpty }
    }

    /// A warning to log once the lock is released.
    private struct Warning {
        let message: String
        let sysctl: String
        let logger: Logger

        func log(folder: String) {
            logger.warning("\(message)", metadata: ["folder": .string(folder), "sysctl": .string(sysctl)])
        }
    }

    private struct State {
        var folders: [String: Folder] = [:]
        var polled: Set<String> = []
        var watcher: FileWatcher?
        /// Why inotify could not start; while set, every folder is polled.
        var watcherFailure: Errno?
        /// The warnings given (each once).
        var warned: Set<String> = []
        var options = WatchOptions()
        var hooks = Hooks()
        var deliver: FileWatcher.Deliver = { _, _, _ in }
        var pollingNeeded: @Sendable () -> Void = {}
    }

    private let state = Mutex(State())

    /// Connects the watches to their registry: `deliver` receives the watcher's events;
    /// `pollingNeeded` is called when the first folder to poll appears.
    func attach(deliver: @escaping FileWatcher.Deliver, pollingNeeded: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.deliver = deliver
            state.pollingNeeded = pollingNeeded
        }
    }

    deinit { state.withLock { $0.watcher?.stop() } }

    /// Stops watching and polling every folder (the namespace is closed): the watcher's thread ends.
    func stopWatching() {
        state.withLock { state in
            state.watcher?.stop()
            state.watcher = nil
            state.folders = [:]
            state.polled = []
        }
    }

    var options: WatchOptions {
        get { state.withLock { $0.options } }
        set { state.withLock { $0.options = newValue } }
    }

    var hooks: Hooks {
        get { state.withLock { $0.hooks } }
        set { state.withLock { $0.hooks = newValue } }
    }

    /// The inotify watcher, while one runs.
    var watcher: FileWatcher? { state.withLock { $0.watcher } }

    /// How many folders presenters need (each watched, polled, or both).
    var folderCount: Int { state.withLock { $0.folders.count } }

    /// The folders looked at every poll interval.
    var polledFolders: [String] { state.withLock { Array($0.polled) } }

    /// Whether the folder at `path` is polled.
    func isPolled(_ path: String) -> Bool { state.withLock { $0.polled.contains(path) } }

    // MARK: Needs

    /// Registration `id` presents the entry `name` of `folder`.
    func want(item name: String, in folder: String, for id: Int) {
        update(folder) { $0.items[name] = $0.items[name]?.adding(id) ?? .one(id) }
    }

    func unwant(item name: String, in folder: String, for id: Int) {
        update(folder) { folder in
            folder.items[name] = folder.items[name]?.removing(id)
        }
    }

    /// Registration `id` presents a folder or package that `folder` is in (or is). With
    /// `refresh`, the watch is added again even if it exists (the folder may have been replaced).
    func want(inside folder: String, for id: Int, refresh: Bool = false) {
        update(folder, refresh: refresh) { $0.insides.insert(id) }
    }

    func unwant(inside folder: String, for id: Int) {
        update(folder) { $0.insides.remove(id) }
    }

    /// Whom the events concern.
    func concerns(_ events: [FileWatcher.Event]) -> [Concern] {
        state.withLock { state in
            var result: [Concern] = []
            for event in events {
                guard let folder = state.folders[event.folder] else { continue }
                if let name = event.name {
                    folder.items[name]?.forEach { result.append(.item($0)) }
                } else {
                    for ids in folder.items.values { ids.forEach { result.append(.item($0)) } }
                }
                for id in folder.insides { result.append(.inside(id, folder: event.folder, name: event.name)) }
            }
            return result
        }
    }

    // MARK: Watching and polling

    private func update(_ path: String, refresh: Bool = false, _ change: (inout Folder) -> Void) {
        let (warning, pollingNeeded) = state.withLock { state -> (Warning?, (@Sendable () -> Void)?) in
            let isNew = state.folders[path] == nil
            change(&state.folders[path, default: Folder()])  // in place: a folder's items are not copied
            guard state.folders[path]?.isEmpty == false else {
                release(path, in: &state)
                return (nil, nil)
            }
            guard isNew || refresh else { return (nil, nil) }
            let (warning, firstPolled) = establish(path, in: &state)
            return (warning, firstPolled ? state.pollingNeeded : nil)
        }
        warning?.log(folder: path)
        pollingNeeded?()
    }

    /// Watches (or polls) the folder at `path`; returns a warning to log, and whether it is the
    /// first folder to poll.
    private func establish(_ path: String, in state: inout State) -> (Warning?, Bool) {
        var poll = state.options.forcePolling
        let interval = state.options.pollInterval
        var warning: Warning?
        if !poll && state.watcher == nil && state.watcherFailure == nil {
            do throws(Errno) {
                state.watcher = try FileWatcher(keepsRenames: true, faults: state.hooks.faults, deliver: state.deliver)
            } catch {
                state.watcherFailure = error
                warning = warn("instances", in: &state, Self.instancesWarning(error, path: path, interval: interval))
            }
        }
        if !poll, let watcher = state.watcher {
            do throws(Errno) {
                try watcher.watch(path)
                if state.hooks.remoteFileSystem(path) != nil { poll = true }
            } catch {
                switch error {
                case .noSuchFileOrDirectory, .notDirectory, .permissionDenied, .tooManySymbolicLinkLevels:
                    break  // gone, or not ours to read: polling would not see more
                default:
                    poll = true
                    warning = warn("watches", in: &state, Self.watchesWarning(error, path: path, interval: interval))
                }
            }
        } else if !poll {
            poll = true  // inotify could not start
        }
        guard poll, !state.polled.contains(path) else { return (warning, false) }
        state.polled.insert(path)
        return (warning, state.polled.count == 1)
    }

    /// The warning of `kind`, the first time only.
    private func warn(_ kind: String, in state: inout State, _ text: @autoclosure () -> (String, String)) -> Warning? {
        guard state.warned.insert(kind).inserted else { return nil }
        let (message, sysctl) = text()
        return Warning(message: message, sysctl: sysctl, logger: state.hooks.logger)
    }

    private func release(_ path: String, in state: inout State) {
        state.folders.removeValue(forKey: path)
        state.polled.remove(path)
        state.watcher?.unwatch(path)
        if state.folders.isEmpty {
            state.watcher?.stop()
            state.watcher = nil
            state.watcherFailure = nil
        }
    }

    // MARK: Warnings

    private static func instancesWarning(_ error: Errno, path: String, interval: Duration) -> (String, String) {
        let sysctl = "fs.inotify.max_user_instances"
        let why =
            error == .tooManyOpenFiles
            ? "this user's inotify instances are used up (\(sysctl) = \(limit(sysctl))), or this process is out of file descriptors"
            : error.readableDescription
        return (
            "DocumentKit cannot start an inotify watcher: \(why). Presented items, starting with \(path), are polled every \(interval) instead. To watch them, raise the limit, for example `sudo sysctl \(sysctl)=1024`.",
            sysctl
        )
    }

    private static func watchesWarning(_ error: Errno, path: String, interval: Duration) -> (String, String) {
        let sysctl = "fs.inotify.max_user_watches"
        let why = error == .noSpace ? "this user's inotify watches are used up (\(sysctl) = \(limit(sysctl)))" : error.readableDescription
        return (
            "DocumentKit cannot watch \(path) for changes: \(why). It, and any other folder that cannot be watched, is polled every \(interval) instead. To watch them, raise the limit, for example `sudo sysctl \(sysctl)=524288`.",
            sysctl
        )
    }

    private static func limit(_ sysctl: String) -> String {
        let file = "/proc/sys/" + sysctl.replacingOccurrences(of: ".", with: "/")
        return (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }
}
