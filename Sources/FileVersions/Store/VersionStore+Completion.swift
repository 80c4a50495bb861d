import Foundation

extension VersionStore {
    /// When a save that keeps the package it replaces by exchange (a package with a manifest
    /// saved over a package) finishes keeping it.
    public enum VersionCompletion: Sendable, Equatable {
        /// The version is complete in the store when the save returns (the default).
        case beforeSaveReturns
        /// The save returns once the new contents are in place and durable; the replaced
        /// package's folders are made anew in the store, the version named and the document's
        /// versions pruned on a background queue, under the document folder's shared hold.
        ///
        /// A listing of the document's versions, or its next save, in this process waits for
        /// that first: the process reads its own saves. Another process lists the version once it
        /// is complete, as during any save. A process that ends first leaves it to the next
        /// save or listing, which completes it as after a crash; call
        /// ``VersionStore/waitForPendingVersions()`` before exiting.
        case afterSaveReturns
    }

    /// Blocks until every version this process is completing in this store after its save
    /// returned (``VersionCompletion/afterSaveReturns``) is complete.
    public func waitForPendingVersions() {
        PendingVersions.shared.wait(forEveryFolderUnder: documentsURL.path + "/")
    }

    /// Blocks until the versions of `key` this process is completing are complete.
    func waitForPendingVersions(of key: DocumentKey) {
        PendingVersions.shared.wait(for: folder(for: key).path)
    }

    /// Runs `work`, the rest of a save of `key` that returned, on the background queue.
    func completeLater(_ key: DocumentKey, _ work: @escaping @Sendable () -> Void) {
        PendingVersions.shared.run(folder(for: key).path, work)
    }
}
