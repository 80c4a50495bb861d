#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import SystemPackage

/// Removing and moving files and packages, each in one atomic step.
///
/// Neither follows a symbolic link at the last component: removing or moving a link removes or
/// moves the link, never what it points to.
public enum FileItem {
    /// Removes the file or package at `url`. The item disappears in one step (it is renamed to a
    /// temporary name first), so no other process ever sees half a package; a crash during the
    /// removal leaves only litter that the next open or save in that folder clears away.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` (`notFound` if there is nothing to remove).
    public static func remove(at url: URL, fileSystem: FileSystem = .live) throws(DocumentKitError) {
        let (parent, parentPath, name) = try openParent(of: url, operation: .remove, using: fileSystem)
        let path = url.standardizedFileURL.path
        let temporaryName = TemporaryName.make(for: name, purpose: "old")
        do {
            try fileSystem.renameWithoutReplacing(name, in: parent.rawValue, to: temporaryName, in: parent.rawValue)
        } catch where AtomicReplacement.isUnsupported(error) {
            do { try fileSystem.rename(name, in: parent.rawValue, to: temporaryName, in: parent.rawValue) } catch {
                throw DocumentKitError(error, operation: .remove, path: path, step: "renaming it aside", originalIsIntact: true)
            }
        } catch {
            throw DocumentKitError(error, operation: .remove, path: path, step: "renaming it aside", originalIsIntact: true)
        }
        do { try fileSystem.synchronizeDirectory(parent.rawValue, name: parentPath) } catch {
            throw DocumentKitError(error, operation: .remove, path: path, step: "flushing the folder (fsync)", originalIsIntact: false)
        }
        do { try removeItem(temporaryName, in: parent.rawValue, using: fileSystem) } catch {
            throw DocumentKitError(
                error, operation: .remove, path: path,
                step: "removing its contents (it is gone from view; the rest is cleared at the next open in “\(parentPath)”)",
                originalIsIntact: false)
        }
    }

    /// Moves (renames) the item at `source` to `destination`, which must not exist.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` (`alreadyExists` if `destination` exists, `crossDevice` if
    ///   the two are on different file systems: nothing is copied).
    public static func move(from source: URL, to destination: URL, fileSystem: FileSystem = .live) throws(DocumentKitError) {
        let (from, fromPath, name) = try openParent(of: source, operation: .move, using: fileSystem)
        let (to, toPath, newName) = try openParent(of: destination, operation: .move, using: fileSystem)
        let path = source.standardizedFileURL.path
        do {
            try fileSystem.renameWithoutReplacing(name, in: from.rawValue, to: newName, in: to.rawValue)
        } catch where AtomicReplacement.isUnsupported(error) {
            guard (try? fileSystem.status(of: newName, in: to.rawValue)) == nil else {
                throw DocumentKitError(.alreadyExists, operation: .move, path: path, originalIsIntact: true,
                                       detail: "“\(destination.path)” exists already.")
            }
            do { try fileSystem.rename(name, in: from.rawValue, to: newName, in: to.rawValue) } catch {
                throw DocumentKitError(error, operation: .move, path: path, step: "renaming it to “\(destination.path)”", originalIsIntact: true)
            }
        } catch {
            throw DocumentKitError(error, operation: .move, path: path, step: "renaming it to “\(destination.path)”", originalIsIntact: true)
        }
        do {
            try fileSystem.synchronizeDirectory(to.rawValue, name: toPath)
            if toPath != fromPath { try fileSystem.synchronizeDirectory(from.rawValue, name: fromPath) }
        } catch {
            throw DocumentKitError(error, operation: .move, path: path, step: "flushing the folders (fsync)", originalIsIntact: false)
        }
    }

    private static func openParent(of url: URL, operation: DocumentKitError.Operation, using fileSystem: FileSystem)
        throws(DocumentKitError) -> (Descriptor, String, String)
    {
        let path = url.standardizedFileURL.path
        let (parentPath, name) = ItemLocation.split(path)
        guard !name.isEmpty, name != ".", name != "..", name != "/" else {
            throw DocumentKitError(.invalidArgument, operation: operation, path: path, detail: "It has no name.")
        }
        do {
            let fd = try fileSystem.open(parentPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
            return (Descriptor(owning: fd), parentPath, name)
        } catch {
            throw DocumentKitError(error, operation: operation, path: path, step: "opening its folder “\(parentPath)”")
        }
    }
}
