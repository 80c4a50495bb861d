#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import SystemPackage

/// "Is the item at the URL still the one this save replaces?" (``SaveOptions/itemToReplace``),
/// asked before a save writes and again at its swap.
extension SaveOptions {
    /// These options with ``itemToReplace`` the item at `url` now (through a symbolic link, as a
    /// save resolves it); unchanged when nothing is there or one is named already.
    /// - Throws: when the item's status can't be read (other than its absence).
    public func replacingItem(at url: URL) throws(DocumentKitError) -> SaveOptions {
        guard itemToReplace == nil else { return self }
        let status: FileStatus
        do { status = try fileSystem.status(of: url.path, in: AT_FDCWD, followingLink: true) } catch {
            if error == .noSuchFileOrDirectory { return self }
            throw DocumentKitError(error, operation: .save, path: url.path, step: "reading the status of the item to replace", originalIsIntact: true)
        }
        var options = self
        options.itemToReplace = FileIdentity(status)
        return options
    }

    /// Whether `status` (the item at the URL, nil when there is none) is ``itemToReplace``;
    /// true when the save names none.
    func isItemToReplace(_ status: FileStatus?) -> Bool { Self.isItem(status, itemToReplace) }

    /// Whether `status` is the item `expected` names (its device and inode); true without one.
    static func isItem(_ status: FileStatus?, _ expected: FileIdentity?) -> Bool {
        guard let expected else { return true }
        guard let status else { return false }
        return status.device == expected.device && status.inode == expected.inode
    }

    /// Throws unless `current`, the item at `path` now, is ``itemToReplace`` (see there).
    func checkItemToReplace(_ current: FileStatus?, path: String) throws(DocumentKitError) {
        try Self.check(current, isItem: itemToReplace, path: path)
    }

    /// Throws unless `current`, the item at `path` now, is the one `expected` names.
    static func check(_ current: FileStatus?, isItem expected: FileIdentity?, path: String) throws(DocumentKitError) {
        guard !isItem(current, expected) else { return }
        throw current == nil ? itemGone(path) : itemReplaced(path)
    }

    /// The item to replace is no longer at `path`.
    static func itemGone(_ path: String) -> DocumentKitError {
        DocumentKitError(
            .notFound, operation: .save, path: path, originalIsIntact: true,
            detail: "It was moved away or deleted while this save ran; the save does not write it again.")
    }

    /// Another item is at `path` than the one to replace.
    static func itemReplaced(_ path: String) -> DocumentKitError {
        DocumentKitError(
            .changedSinceRead, operation: .save, path: path, originalIsIntact: true,
            detail: "Another item was put in its place while this save ran; it was not replaced.")
    }
}
