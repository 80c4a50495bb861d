import Foundation

/// An object that presents an item (a file, a package or a folder) and hears about changes
/// other threads and processes make to it, as `NSFilePresenter` on Apple platforms.
///
/// Register it with ``CoordinationNamespace/addPresenter(_:)``. Callbacks arrive in order, one
/// at a time, on the presenter's own serial delivery (never two at once for one presenter), and
/// are `async`: a callback may await whatever it needs. Every method has a default that does
/// nothing, so a presenter implements only what it cares about.
///
/// Changes are seen through one file-system watcher per namespace (inotify on the folders of
/// presented items, and on every folder inside a presented folder), so writers that do not
/// coordinate — editors, `mv`, `rm`, rsync, sync engines — are seen too; where inotify is blind
/// or refused (network file systems, exhausted limits) items are polled (see ``WatchOptions``).
/// Each change is delivered once: a callback is sent only when the item on disk differs from
/// what the presenter last heard about.
///
/// A coordinator of the same item, in this process or another, asks the presenter first:
/// ``savePresentedItemChanges()`` before a read (unless it reads `withoutChanges`) or a merging
/// write, ``relinquishPresentedItemToReader()`` / ``relinquishPresentedItemToWriter()`` before
/// its accessor runs (the returned reacquirer runs when it is done), and
/// ``accommodatePresentedItemDeletion()`` before it deletes the item. A presenter of a folder (or
/// package) hears ``accommodatePresentedSubitemDeletion(at:)`` before a coordinator deletes
/// anything inside it, at any depth.
///
/// > Important: A callback must not start a coordination of the item it is asked about: the
/// > coordinator is waiting for it, so that would deadlock. DocumentKit detects it and fails
/// > that coordination at once with `busy`.
public protocol FilePresenter: AnyObject, Sendable {
    /// The item presented, when the presenter is registered. The namespace follows moves of the
    /// item itself and reports them through ``presentedItemDidMove(to:)``.
    var presentedItemURL: URL? { get }

    /// Someone will read the item: write out unsaved changes now. A thrown error fails their coordination.
    func savePresentedItemChanges() async throws
    /// Someone will read the item: pause what would disturb a reader. The returned closure, if
    /// any, runs when the reader is done.
    func relinquishPresentedItemToReader() async -> (@Sendable () async -> Void)?
    /// Someone will write the item: stop writing it. The returned closure, if any, runs when the
    /// writer is done.
    func relinquishPresentedItemToWriter() async -> (@Sendable () async -> Void)?

    /// The item's contents or attributes changed (for a package: anything inside it).
    func presentedItemDidChange() async
    /// The item was moved or renamed; `newURL` is where it is now.
    func presentedItemDidMove(to newURL: URL) async
    /// The item was deleted. (For a writer that does not coordinate, this arrives after the fact.)
    func accommodatePresentedItemDeletion() async
    /// An item appeared inside the presented folder, at any depth (for a folder that appeared
    /// with things in it, each of them too, the folder first).
    func presentedSubitemDidAppear(at url: URL) async
    /// An item inside the presented folder, at any depth, was moved or renamed within it (what
    /// a moved folder holds moves with it, without callbacks of its own).
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) async
    /// An item inside the presented folder, at any depth, changed (for a package inside it:
    /// anything in the package).
    func presentedSubitemDidChange(at url: URL) async
    /// An item inside the presented folder (or package), at any depth, will be deleted by a
    /// coordinator (it is still there; the coordinator waits for this callback), or was deleted
    /// or moved out of the folder by someone else (for a folder, each item in it too, deepest first).
    func accommodatePresentedSubitemDeletion(at url: URL) async
}

extension FilePresenter {
    public func savePresentedItemChanges() async throws {}
    public func relinquishPresentedItemToReader() async -> (@Sendable () async -> Void)? { nil }
    public func relinquishPresentedItemToWriter() async -> (@Sendable () async -> Void)? { nil }
    public func presentedItemDidChange() async {}
    public func presentedItemDidMove(to newURL: URL) async {}
    public func accommodatePresentedItemDeletion() async {}
    public func presentedSubitemDidAppear(at url: URL) async {}
    public func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) async {}
    public func presentedSubitemDidChange(at url: URL) async {}
    public func accommodatePresentedSubitemDeletion(at url: URL) async {}
}

/// What happened to a presented item, as ``CoordinationNamespace/events(for:)`` reports it.
public enum PresentedItemEvent: Sendable, Hashable, CustomStringConvertible {
    /// The item changed.
    case changed(URL)
    /// The item moved from the first URL to the second.
    case moved(from: URL, to: URL)
    /// The item was deleted.
    case deleted(URL)
    /// An item appeared inside the presented folder (at any depth).
    case subitemAppeared(URL)
    /// An item inside the presented folder changed.
    case subitemChanged(URL)
    /// An item inside the presented folder moved within it.
    case subitemMoved(from: URL, to: URL)
    /// An item inside the presented folder was deleted (or moved out of it).
    case subitemDeleted(URL)

    public var description: String {
        switch self {
        case .changed(let url): "changed \(url.path)"
        case .moved(let from, let to): "moved \(from.path) -> \(to.path)"
        case .deleted(let url): "deleted \(url.path)"
        case .subitemAppeared(let url): "appeared \(url.path)"
        case .subitemChanged(let url): "changed \(url.path)"
        case .subitemMoved(let from, let to): "moved \(from.path) -> \(to.path)"
        case .subitemDeleted(let url): "deleted \(url.path)"
        }
    }
}
