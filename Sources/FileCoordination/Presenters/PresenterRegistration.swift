import Foundation
import Synchronization

/// A presenter's place in a namespace: keep it for as long as the presenter should hear about
/// changes, and call ``remove()`` when done (as `NSFileCoordinator.removeFilePresenter`).
public final class PresenterRegistration: Sendable {
    private let registry: PresenterRegistry
    private let id: Mutex<Int?>
    private let onRemove: @Sendable (Int64) -> Void

    init(registry: PresenterRegistry, id: Int?, onRemove: @escaping @Sendable (Int64) -> Void = { _ in }) {
        self.registry = registry
        self.id = Mutex(id)
        self.onRemove = onRemove
    }

    /// The registry's id of the presenter, while registered.
    var currentID: Int? { id.withLock { $0 } }

    /// Stops delivering callbacks to the presenter. Callbacks already under way finish.
    public func remove() {
        if let id = id.withLock({ value -> Int? in defer { value = nil }; return value }), let lastOfUnit = registry.remove(id) {
            onRemove(lastOfUnit)
        }
    }

    /// Takes the item as it is now as known to the presenter: call it after the presenter's own
    /// write, so that the watcher does not report that write back to it.
    public func presenterHasSeenCurrentState() {
        if let id = id.withLock({ $0 }) { registry.noteCurrentState(of: id) }
    }

    deinit { remove() }
}

extension CoordinationNamespace {
    /// Registers `presenter` for callbacks about its ``FilePresenter/presentedItemURL``.
    ///
    /// A presenter whose URL is nil is not registered (the returned registration does nothing).
    /// The registration holds the presenter; removing it (or releasing it) ends the callbacks.
    public func addPresenter(_ presenter: any FilePresenter) -> PresenterRegistration {
        let unit = presenter.presentedItemURL.flatMap { url -> Int64? in
            guard let item = try? ItemPath.resolve(url, resolvingFinalLink: false, namespace: self) else { return nil }
            return item.unitOffset
        }
        let id = presenters.add(presenter, unit: unit)
        if let unit, id != nil, presenters.presenterCount(of: unit) == 1 { presence?.publish(unit) }
        return PresenterRegistration(registry: presenters, id: id, onRemove: { [weak self] unit in self?.presence?.unpublish(unit) })
    }

    /// The changes to the item at `url` (for a folder: to the items inside it too, at any depth),
    /// as an asynchronous sequence; ending the iteration removes the presenter behind it.
    public func events(for url: URL) -> AsyncStream<PresentedItemEvent> {
        AsyncStream { continuation in
            let presenter = StreamPresenter(url: url, continuation: continuation)
            let registration = addPresenter(presenter)
            continuation.onTermination = { _ in registration.remove() }
        }
    }
}

/// Turns presenter callbacks into a stream of events.
private final class StreamPresenter: FilePresenter {
    private let url = Mutex<URL?>(nil)
    private let continuation: AsyncStream<PresentedItemEvent>.Continuation

    init(url: URL, continuation: AsyncStream<PresentedItemEvent>.Continuation) {
        self.url.withLock { $0 = url }
        self.continuation = continuation
    }

    var presentedItemURL: URL? { url.withLock { $0 } }

    func presentedItemDidChange() async { continuation.yield(.changed(presentedItemURL!)) }
    func presentedItemDidMove(to newURL: URL) async {
        let old = url.withLock { value -> URL? in defer { value = newURL }; return value }
        continuation.yield(.moved(from: old!, to: newURL))
    }
    func accommodatePresentedItemDeletion() async { continuation.yield(.deleted(presentedItemURL!)) }
    func presentedSubitemDidAppear(at url: URL) async { continuation.yield(.subitemAppeared(url)) }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) async { continuation.yield(.subitemMoved(from: oldURL, to: newURL)) }
    func presentedSubitemDidChange(at url: URL) async { continuation.yield(.subitemChanged(url)) }
    func accommodatePresentedSubitemDeletion(at url: URL) async { continuation.yield(.subitemDeleted(url)) }
}
