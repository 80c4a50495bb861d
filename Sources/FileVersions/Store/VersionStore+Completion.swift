import Foundation

extension VersionStore {
    /// When a save that keeps the package it replaces by exchange (a package with a manifest
    /// saved over a package) finishes keeping it.
    public enum VersionCompletion: Sendable, Equatable {
        /// The version is complete in the store when the save returns (the default).
        case beforeSaveReturns
        /// The save returns once the new contents are in place and durable, and the replaced
        /// package reachable in the store; its folders are made anew there and the version named
        /// on a background queue, under the document folder's shared hold. The document's
        /// versions are pruned at the start of its next save, inside that save's coordinated
        /// write (never while another process may be restoring one).
        ///
        /// In this process, a listing of the document's versions, its next save, and an operation
        /// on a kept version (``VersionStore/replaceItem(at:with:keepingCurrentAs:)``,
        /// ``VersionStore/markResolved(_:as:)``, ``VersionStore/remove(_:evenIfUnresolvedConflict:)``)
        /// wait for it: the process reads its own saves. The `url` of the version `save` returns
        /// is where it will be: read it through the store, not directly, until then. Another
        /// process lists the version once it is complete, as during any save. A process that
        /// ends first leaves it to the next save or listing, which completes it as after a
        /// crash; call ``VersionStore/waitForPendingVersions()`` before exiting.
        case afterSaveReturns
    }

    /// Blocks until every version this process was completing in this store after its save
    /// returned (``VersionCompletion/afterSaveReturns``), when it was called, is complete.
    public func waitForPendingVersions() {
        PendingVersions.shared.wait(forEveryFolderUnder: documentsURL.path + "/")
    }

    /// Blocks until the versions of `key` this process is completing are complete.
    func waitForPendingVersions(of key: DocumentKey) {
        PendingVersions.shared.wait(for: folder(for: key).path)
    }

    /// Blocks until `version` (one a save of this process returned, maybe still completing) is
    /// complete: an operation on a kept version reads or changes its entry.
    func waitUntilComplete(_ version: FileVersion) {
        PendingVersions.shared.wait(for: version.url.deletingLastPathComponent().deletingLastPathComponent().path)
    }

    /// Runs `work`, the rest of a save of `key` that returned, on the background queue.
    func completeLater(_ key: DocumentKey, _ work: @escaping @Sendable () -> Void) {
        PendingVersions.shared.run(folder(for: key).path, work)
    }
}
