import DocumentKitSystem
import Foundation

/// How a namespace's presenters see changes made by writers that do not coordinate.
///
/// Folders of presented items are watched with inotify. Items on file systems where inotify
/// misses other machines' writes (NFS, CIFS/SMB, FUSE such as sshfs, 9p, cluster file systems)
/// are polled as well, and folders the kernel refuses to watch (out of inotify watches or
/// instances) are polled instead.
public struct WatchOptions: Sendable, Hashable {
    /// How often polled items are looked at. Default: 1 second.
    public var pollInterval: Duration
    /// Poll every presented item instead of watching with inotify. Default: whether the
    /// environment variable `DOCUMENTKIT_FORCE_POLLING` is `1`.
    public var forcePolling: Bool

    public init(pollInterval: Duration = .seconds(1), forcePolling: Bool = WatchOptions.forcePollingFromEnvironment) {
        self.pollInterval = pollInterval
        self.forcePolling = forcePolling
    }

    /// Whether `DOCUMENTKIT_FORCE_POLLING` is `1`.
    public static var forcePollingFromEnvironment: Bool {
        ProcessInfo.processInfo.environment["DOCUMENTKIT_FORCE_POLLING"] == "1"
    }

    /// The poll interval for Dispatch (at least 1 ms).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = pollInterval.components
        return .nanoseconds(max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}

extension CoordinationNamespace {
    /// A namespace in `directory` whose presenters see uncoordinated changes as `watchOptions` says.
    public convenience init(directory: URL, packageExtensions: Set<String> = [], watchOptions: WatchOptions) throws(DocumentKitError) {
        try self.init(directory: directory, packageExtensions: packageExtensions)
        presenters.watches.options = watchOptions
    }

    /// How this namespace's presenters see uncoordinated changes.
    public var watchOptions: WatchOptions { presenters.watches.options }
}
