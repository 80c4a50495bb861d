import DocumentKitSystem
import FileCoordination
import Foundation

/// `NSFileVersion`'s class and instance methods, on the store of the item's library
/// (``VersionStore/forItem(at:coordinator:manifestName:pruning:)``): the nearest enclosing
/// folder with a store, else the item's folder.
extension FileVersion {
    /// The item as it is now; nil when there is no item.
    public static func currentVersionOfItem(at url: URL) -> FileVersion? {
        VersionStore.forItem(at: url).currentVersion(ofItemAt: url)
    }

    /// The item's versions other than the current one, newest first.
    public static func otherVersionsOfItem(at url: URL) throws(DocumentKitError) -> [FileVersion] {
        try VersionStore.forItem(at: url).otherVersions(ofItemAt: url)
    }

    /// The item's conflict versions not resolved yet, newest first.
    public static func unresolvedConflictVersionsOfItem(at url: URL) throws(DocumentKitError) -> [FileVersion] {
        try VersionStore.forItem(at: url).unresolvedConflictVersions(ofItemAt: url)
    }

    /// The version of the item with `identifier`, or nil if it is gone.
    public static func version(itemAt url: URL, forPersistentIdentifier identifier: String) throws(DocumentKitError) -> FileVersion? {
        try VersionStore.forItem(at: url).version(ofItemAt: url, withPersistentIdentifier: identifier)
    }

    /// Adds a version of the item from the file or package at `contentsURL`.
    @discardableResult
    public static func addOfItem(
        at url: URL, withContentsOf contentsURL: URL, byMoving: Bool = false, coordinator: FileCoordinator? = nil
    ) throws(DocumentKitError) -> FileVersion {
        try VersionStore.forItem(at: url, coordinator: coordinator)
            .addVersion(ofItemAt: url, withContentsOf: contentsURL, byMoving: byMoving)
    }

    /// Removes every version of the item but the current one; unresolved conflicts stay unless
    /// `includingUnresolvedConflicts`.
    public static func removeOtherVersionsOfItem(
        at url: URL, includingUnresolvedConflicts: Bool = false, coordinator: FileCoordinator? = nil
    ) throws(DocumentKitError) {
        try VersionStore.forItem(at: url, coordinator: coordinator)
            .removeOtherVersions(ofItemAt: url, includingUnresolvedConflicts: includingUnresolvedConflicts)
    }

    /// Replaces the item with this version's contents (the current contents are kept as a
    /// version first). Returns the item's URL.
    @discardableResult
    public func replaceItem(coordinator: FileCoordinator? = nil) throws(DocumentKitError) -> URL {
        try VersionStore.forItem(at: itemURL, coordinator: coordinator).replaceItem(at: itemURL, with: self)
    }

    /// Removes this version from the store (not the current version; not an unresolved conflict
    /// unless `evenIfUnresolvedConflict`).
    public func remove(evenIfUnresolvedConflict: Bool = false, coordinator: FileCoordinator? = nil) throws(DocumentKitError) {
        try VersionStore.forItem(at: itemURL, coordinator: coordinator).remove(self, evenIfUnresolvedConflict: evenIfUnresolvedConflict)
    }

    /// Marks this conflict version resolved (`NSFileVersion.isResolved = true`), recording how.
    @discardableResult
    public func markResolved(as resolution: Resolution = .keptCurrent, coordinator: FileCoordinator? = nil) throws(DocumentKitError) -> FileVersion {
        try VersionStore.forItem(at: itemURL, coordinator: coordinator).markResolved(self, as: resolution)
    }
}
