#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import Logging
import SystemPackage

/// Keeps the item a save replaced at ``SaveOptions/replacedItemDestination`` instead of removing it.
struct ReplacedItem {
    let fileSystem: FileSystem
    let documentPath: String

    /// Renames `name` in `directory` to `destination`; false (after a warning) when it can't.
    func move(_ name: String, in directory: CInt, to destination: URL?) -> Bool {
        guard let destination else { return false }
        return withParent(of: destination) { (parent, last) throws(Errno) in
            try fileSystem.rename(name, in: directory, to: last, in: parent)
        }
    }

    /// Hard-links `name` in `directory` as `destination`; false (after a warning) when it can't.
    func link(_ name: String, in directory: CInt, to destination: URL?) -> Bool {
        guard let destination else { return false }
        return withParent(of: destination) { (parent, last) throws(Errno) in
            try fileSystem.link(name, in: directory, as: last, in: parent)
        }
    }

    /// Removes the link ``link(_:in:to:)`` made, after a failed save.
    func unlink(_ destination: URL?) {
        guard let destination else { return }
        _ = try? fileSystem.unlink(destination.path, in: AT_FDCWD)
    }

    private func withParent(of destination: URL, _ body: (CInt, String) throws(Errno) -> Void) -> Bool {
        let parentPath = destination.deletingLastPathComponent().path
        do {
            let parent = try fileSystem.open(parentPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
            defer { Glibc.close(parent) }
            try body(parent, destination.lastPathComponent)
            return true
        } catch {
            AtomicReplacement.logger.warning(
                "Saved \(documentPath); keeping the previous version at \(destination.path) failed (\(error.readableDescription)); it is removed instead")
            return false
        }
    }
}
