#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Synchronization

/// Runs ``InterruptedSaveRecovery`` before an item is read, at most once per state of its folder.
///
/// Litter only appears by adding entries, which changes the folder's modification time; a folder
/// whose time has not moved since it was found clean is not listed again. This keeps reading many
/// documents of one folder linear in their number.
package final class LeftoverCleaner: Sendable {
    package static let shared = LeftoverCleaner()

    private struct FolderKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private let clean = Mutex<[FolderKey: Int64]>([:])

    package func cleanIfNeeded(_ location: ItemLocation, using fileSystem: FileSystem) throws(DocumentKitError) {
        let parent = location.parent.rawValue
        guard let before = try? fileSystem.status(of: parent, name: location.parentPath) else { return }
        let key = FolderKey(device: before.device, inode: before.inode)
        if clean.withLock({ $0[key] }) == before.modificationTime { return }
        let report = try InterruptedSaveRecovery(fileSystem: fileSystem).run(
            in: parent, path: location.parentPath, itemPath: location.path)
        guard report.busy.isEmpty, let after = try? fileSystem.status(of: parent, name: location.parentPath) else { return }
        clean.withLock { $0[key] = after.modificationTime }
    }
}
