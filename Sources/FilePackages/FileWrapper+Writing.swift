#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Logging

extension FileWrapper {
    /// Saves the wrapper at `url` atomically: afterwards the item is wholly the new one, and a
    /// crash or failure at any moment leaves it wholly the old one.
    ///
    /// - A directory wrapper is saved as a package: the new tree is built in a temporary sibling
    ///   (`.<name>.dk-new-…`), members read from a package and not changed are hard-linked rather
    ///   than copied, and the tree is swapped in with `renameat2(RENAME_EXCHANGE)` (or, where the
    ///   file system lacks it, a journaled two-rename swap that the next open completes).
    /// - A regular-file wrapper is written to a temporary file in the same folder, created
    ///   exclusively with the final mode, flushed, and renamed over the item.
    /// - The item's permissions (and owner and group, where the process may set them) are kept;
    ///   they are never widened.
    /// - If `url` is a symbolic link, the save goes to the file it points to; the link stays.
    /// - Litter from earlier interrupted saves next to the item is removed first; in a folder of
    ///   more than one block of names (50 to 100 entries on ext4), only the item's own interrupted swap is completed first,
    ///   and the rest of the folder's litter is removed by one open or save in 64 (or by
    ///   ``FileItem/completeInterruptedSaves(inFolderAt:fileSystem:)``), so that a save costs the
    ///   same in a folder of 100 or 100,000 documents.
    ///
    /// - Returns: The wrapper as saved: its members now refer to the new files on disk, so the
    ///   next save can hard-link them in turn.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the item, the failed step and the system error. The
    ///   original is untouched after every failure (``/DocumentKitSystem/DocumentKitError/originalIsIntact``), except
    ///   where the error says otherwise.
    @discardableResult
    public func write(to url: URL, options: SaveOptions = SaveOptions()) throws(DocumentKitError) -> FileWrapper {
        let fileSystem = options.fileSystem
        let location = try ItemLocation.resolve(url, operation: .save, using: fileSystem)
        let path = location.path
        let recovery = InterruptedSaveRecovery(fileSystem: fileSystem)
        let folder: FileStatus
        do { folder = try fileSystem.status(of: location.parent.rawValue, name: location.parentPath) } catch {
            throw DocumentKitError(error, operation: .save, path: path, step: "reading the status of its folder", originalIsIntact: true)
        }
        if !LeftoverCleaner.sweepsWholeFolder(folder) {
            _ = try recovery.completeIntent(ofItemNamed: location.name, in: location.parent.rawValue, path: location.parentPath)
        } else {
            _ = try recovery.run(in: location.parent.rawValue, path: location.parentPath, itemPath: path)
        }
        let current: FileStatus?
        do { current = try fileSystem.status(of: location.name, in: location.parent.rawValue) } catch {
            guard error == .noSuchFileOrDirectory else {
                throw DocumentKitError(error, operation: .save, path: path, step: "reading the status of the current item", originalIsIntact: true)
            }
            current = nil
        }
        try options.checkItemToReplace(current, path: path)
        switch storage {
        case .directory(let children):
            return try PackageSave(location: location, current: current, options: options).run(children, permissions: permissions)
        case .data, .lazy, .provided:
            return try FileSave(location: location, current: current, options: options).run(self)
        case .symbolicLink:
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: path, originalIsIntact: true,
                detail: "A document must be a file or a package, not a symbolic link.")
        }
    }
}

/// The permissions and ownership a replacement gets, so that it never grants more than the item
/// it replaces.
struct Ownership {
    let fileSystem: FileSystem

    /// Gives the open new item `fd` the owner, group and mode of `current` (or `requested`).
    /// If the group cannot be kept, the group bits are cleared rather than granted to another group.
    func apply(to fd: CInt, current: FileStatus?, requested: UInt32?, documentPath: String) throws(DocumentKitError) {
        guard let current else {
            if let requested { try changeMode(fd, requested, documentPath) }
            return
        }
        // The item's mode is kept; a requested mode can narrow it, never widen it.
        var mode = requested.map { $0 & current.permissions } ?? current.permissions
        let mine: FileStatus
        do { mine = try fileSystem.status(of: fd, name: documentPath) } catch {
            throw DocumentKitError(error, operation: .save, path: documentPath, step: "reading the new item's status", originalIsIntact: true)
        }
        if mine.userID != current.userID || mine.groupID != current.groupID {
            do { try fileSystem.changeOwner(fd, user: current.userID, group: current.groupID, name: documentPath) } catch {
                if error != .notPermitted && error != .permissionDenied {
                    throw DocumentKitError(error, operation: .save, path: documentPath, step: "keeping the owner", originalIsIntact: true)
                }
                // Try the group alone (allowed when we own the file and belong to the group).
                if (try? fileSystem.changeOwner(fd, user: UInt32.max, group: current.groupID, name: documentPath)) == nil,
                    mine.groupID != current.groupID
                {
                    mode &= ~0o070
                }
                if mine.userID != current.userID { mode &= ~0o7000 }
            }
        }
        try changeMode(fd, mode, documentPath)
    }

    private func changeMode(_ fd: CInt, _ mode: UInt32, _ documentPath: String) throws(DocumentKitError) {
        do { try fileSystem.changeMode(fd, to: mode, name: documentPath) } catch {
            throw DocumentKitError(error, operation: .save, path: documentPath, step: "setting the permissions", originalIsIntact: true)
        }
    }
}
