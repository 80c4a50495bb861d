import DocumentKitSystem
import FileCoordination
import Foundation
import Synchronization

/// An object that hears when an item gains or loses versions, or has a conflict resolved, as
/// `NSFilePresenter`'s version callbacks on Apple platforms.
///
/// Register it with ``VersionStore/addVersionPresenter(_:forItemAt:in:)``. The store's folder
/// is watched, so versions added by any process — a conflicting save, a sync engine's copy
/// adopted on another machine and synced here — are heard. Callbacks arrive one at a time, in
/// order. Every method has a default that does nothing.
public protocol VersionPresenter: AnyObject, Sendable {
    /// The item gained a version: an older version kept by a save, or a conflict version.
    func presentedItemDidGain(_ version: FileVersion) async
    /// A version of the item was removed (pruned, or removed by someone).
    func presentedItemDidLose(_ version: FileVersion) async
    /// A conflict version of the item was marked resolved.
    func presentedItemDidResolveConflict(_ version: FileVersion) async
}

extension VersionPresenter {
    public func presentedItemDidGain(_ version: FileVersion) async {}
    public func presentedItemDidLose(_ version: FileVersion) async {}
    public func presentedItemDidResolveConflict(_ version: FileVersion) async {}
}

extension VersionStore {
    /// Tells `presenter` about versions of the item at `itemURL` that appear, go or are
    /// resolved, whoever changes them. Keep the registration: releasing it (or calling
    /// ``/FileCoordination/PresenterRegistration/remove()``) ends the callbacks.
    ///
    /// The versions there already are the starting point: they are not announced.
    public func addVersionPresenter(
        _ presenter: any VersionPresenter, forItemAt itemURL: URL, in namespace: CoordinationNamespace
    ) throws(DocumentKitError) -> PresenterRegistration {
        try prepareStore()
        let key = documentKey(forItemAt: itemURL)
        let folder = folder(for: key)
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw DocumentKitError(.ioError, operation: .create, path: folder.path, detail: error.localizedDescription)
        }
        let watcher = VersionFolderPresenter(store: self, key: key, itemURL: itemURL, folder: folder, presenter: presenter)
        return namespace.addPresenter(watcher)
    }
}

/// Presents a document's folder in the store and turns its changes into version callbacks.
final class VersionFolderPresenter: FilePresenter {
    let store: VersionStore
    let key: VersionStore.DocumentKey
    let itemURL: URL
    let folder: URL
    let presenter: any VersionPresenter
    /// The versions last announced, by id.
    private let known: Mutex<[String: FileVersion]>

    init(store: VersionStore, key: VersionStore.DocumentKey, itemURL: URL, folder: URL, presenter: any VersionPresenter) {
        self.store = store
        self.key = key
        self.itemURL = itemURL
        self.folder = folder
        self.presenter = presenter
        let versions = store.storedVersions(of: key, itemURL: itemURL, reporting: false).0
        self.known = Mutex(Dictionary(versions.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    var presentedItemURL: URL? { folder }

    func presentedItemDidChange() async { await rescan() }
    func presentedSubitemDidAppear(at url: URL) async { await rescan() }
    func presentedSubitemDidChange(at url: URL) async { await rescan() }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) async { await rescan() }
    func accommodatePresentedSubitemDeletion(at url: URL) async { await rescan() }

    /// Compares the folder with what was announced, and announces the difference.
    private func rescan() async {
        let now = store.storedVersions(of: key, itemURL: itemURL, reporting: false).0
        let current = Dictionary(now.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { first, _ in first })
        let (gained, lost, resolved) = known.withLock { known -> ([FileVersion], [FileVersion], [FileVersion]) in
            let gained = now.filter { known[$0.persistentIdentifier] == nil }.reversed()
            let lost = known.values.filter { current[$0.persistentIdentifier] == nil }.sorted { $0.persistentIdentifier < $1.persistentIdentifier }
            let resolved = now.filter { version in
                guard let before = known[version.persistentIdentifier] else { return false }
                return before.isUnresolvedConflict && !version.isUnresolvedConflict
            }
            known = current
            return (Array(gained), lost, resolved)
        }
        for version in gained { await presenter.presentedItemDidGain(version) }
        for version in resolved { await presenter.presentedItemDidResolveConflict(version) }
        for version in lost { await presenter.presentedItemDidLose(version) }
    }
}
