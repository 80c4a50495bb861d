#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import Logging
import SystemPackage

extension VersionStore {
    /// The format version in `store.json` (see ``checkStoreFormat()``), after repairing a damaged
    /// one (see ``repairStoreDescription()``).
    @discardableResult
    func checkOrRepairStoreFormat() throws(DocumentKitError) -> Int? {
        do { return try checkStoreFormat() } catch {
            guard error.code == .corruptData, error.step == Self.damagedDescriptionStep else { throw error }
            try repairStoreDescription()
            return try checkStoreFormat()
        }
    }

    /// How long a repair waits for another process repairing the same store.
    static let repairLockTimeout: Duration = .seconds(10)

    /// Rebuilds a damaged `store.json` (not JSON, truncated, without a format or version) from
    /// the store's entries: the versions are all in `documents/` and each `record.json` says what
    /// it is, so only the description is lost. Under an exclusive lock on the store's folder, the
    /// description is read again (another process may have repaired it); if it is still damaged,
    /// every version's files are made private (as the migration from format 1 does: the store's
    /// format can't be known, and a format-1 version may share files with a document), the
    /// damaged file is kept beside it as `store.json.damaged-DATE` for inspection, and a new
    /// description of this code's format is renamed over it. A notice in the log says what was done.
    func repairStoreDescription() throws(DocumentKitError) {
        let storeFile = descriptionURL
        let folder = try openFolder(url, "opening the version store to repair its description")
        try lockForRepair(folder, path: url.path)
        let reason: String
        do throws(Errno) {
            guard let read = try readStoreFile(storeFile), case .damaged(let why) = Self.describe(read) else { return }
            reason = why
        } catch {
            throw DocumentKitError(error, operation: .read, path: storeFile.path, step: "reading the version store's description")
        }
        let documents = try makeEveryVersionPrivate()
        let aside = "store.json.damaged-" + VersionIdentifier.timestamp(Date()) + "-" + TemporaryName.randomSuffix()
        do { try fileSystem.link("store.json", in: folder.rawValue, as: aside, in: folder.rawValue) } catch {
            throw DocumentKitError(error, operation: .save, path: url.path + "/" + aside, step: "keeping the damaged version store description aside")
        }
        try replaceStoreDescription(in: folder, step: "repairing the version store's description")
        Self.logger.notice(
            "Version store \(url.path): store.json was damaged (\(reason)); it was rebuilt from the store's entries (\(documents) documents) as format \(Self.formatVersion), and the damaged one is kept as \(aside)")
    }

    /// Takes the exclusive lock of the store's folder for a repair, waiting up to ``repairLockTimeout``
    /// for another process's repair (it is released when `folder` is closed).
    private func lockForRepair(_ folder: Descriptor, path: String) throws(DocumentKitError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: Self.repairLockTimeout)
        while true {
            do throws(Errno) {
                try fileSystem.lockExclusivelyWithoutWaiting(folder.rawValue, name: path)
                return
            } catch {
                guard error == .wouldBlock, clock.now < deadline else {
                    throw DocumentKitError(error, operation: .save, path: path, step: "locking the version store to repair its description")
                }
                usleep(10_000)
            }
        }
    }
}
