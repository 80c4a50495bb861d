#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Synchronization

/// The identifier a copy of a document was given instead of the original's.
struct DocumentIdentityChange: Sendable, Equatable {
    /// The identifier the copy shared with the original.
    var old: String
    /// The copy's own.
    var new: String
}

/// A copy is a new document: `cp -a` of a package, or a sync engine's, shares the original's
/// document identifier, and so its history in the version store. At its first save in place, a
/// document that finds another live item holding its identifier gives itself one of its own.
///
/// The rule: the item this process saved in place last with the identifier holds it (a move keeps
/// the file, a copy is another: ``LastSavedItems``); a document that is that item is no copy, and
/// one that finds that item beside it (a listing of the folder, no `stat` per name) is one. Else
/// the item holding an identifier is the one at the place where the version store
/// last kept a version of that identifier (the name recorded with its newest version, in the
/// document's folder). If that item exists, is another file than the document's, and its
/// manifest has the same identifier, the document is a copy: before its save it writes a new
/// identifier into the manifest on disk (its members untouched, nothing kept as a version),
/// then saves as usual, so the state it replaces is kept in its own history and the original's
/// history is never touched. While the identifier has no history yet, the sibling of the same
/// kind (path extension) with the identifier whose folder changed earlier (its change time) is
/// the original: a copy is made after it. The folder is listed then, once per document, unless
/// ``Document/identityLookup`` names the siblings that hold the identifier.
extension Document {
    /// The identity change the save in place at `url` must make, if the document is a copy
    /// (see above); looked at once per document, at its first save in place.
    func identityOfCopy(at url: URL) -> DocumentIdentityChange? {
        let (checked, manifest, store) = state.withLock { state in
            (state.checkedIdentity || state.ownIdentity != nil, state.manifest, state.versionStore)
        }
        guard !checked else { return nil }
        let change = copyIdentityChange(at: url, manifest: manifest, store: store)
        // Once found, the change is made by the save (``takeOwnIdentity``), or looked for again.
        if change == nil { state.withLock { $0.checkedIdentity = true } }
        return change
    }

    private func copyIdentityChange(at url: URL, manifest: DocumentManifest?, store: VersionStore?) -> DocumentIdentityChange? {
        guard let identifier = manifest?.documentIdentifier, let store, let format, let here = ItemState.ofItem(at: url) else {
            return nil
        }
        let folder = url.deletingLastPathComponent()
        let change = DocumentIdentityChange(old: identifier, new: UUID().uuidString)
        // The item this process saved last with the identifier holds it, wherever it was moved.
        // The file is its device, inode and modification time: a move keeps all three, and an inode
        // freed and reused by a copy made since comes with the copy's own time.
        if let saved = LastSavedItems.item(for: identifier), saved.device == here.identity.device {
            if LastSavedItems.isSame(saved, here.identity) { return nil }
            if let name = Self.name(ofItem: saved.inode, in: folder, fileSystem: saveOptions.fileSystem), name != url.lastPathComponent,
                let there = ItemState.ofItem(at: folder.appendingPathComponent(name)), LastSavedItems.isSame(saved, there.identity),
                Self.item(
                    at: folder.appendingPathComponent(name), holds: identifier, otherThan: here, manifestName: format.manifestName,
                    fileSystem: saveOptions.fileSystem) != nil
            {
                return change
            }
        }
        if let newest = try? store.newestVersion(ofItemAt: url) {
            // The history's place holds the identifier.
            let place = folder.appendingPathComponent(newest.localizedName)
            guard place.lastPathComponent != url.lastPathComponent,
                Self.item(at: place, holds: identifier, otherThan: here, manifestName: format.manifestName, fileSystem: saveOptions.fileSystem) != nil
            else { return nil }
            return change
        }
        // No history yet: a sibling of the same kind with the identifier whose folder changed
        // earlier (the original, which a copy is made from) holds it.
        guard !url.pathExtension.isEmpty else { return nil }
        let lookup = state.withLock { $0.identityLookup }
        let names: [String]
        if let found = lookup?.items(holding: identifier, in: folder) {
            names = found.map(\.lastPathComponent)
        } else {
            guard let listed = Self.names(in: folder, fileSystem: saveOptions.fileSystem) else { return nil }
            names = listed
        }
        for name in names.sorted() where name != url.lastPathComponent && !name.hasPrefix(".") && name.hasSuffix("." + url.pathExtension) {
            let place = folder.appendingPathComponent(name)
            guard
                let there = Self.item(
                    at: place, holds: identifier, otherThan: here, manifestName: format.manifestName, fileSystem: saveOptions.fileSystem)
            else { continue }
            let (thereChanged, hereChanged) = (there.identity.changeTime ?? there.identity.modificationTime, here.identity.changeTime ?? here.identity.modificationTime)
            if thereChanged < hereChanged { return change }
        }
        return nil
    }

    /// The state of the item at `place` if it is another file than `here` whose manifest has
    /// `identifier`; nil otherwise.
    private static func item(
        at place: URL, holds identifier: String, otherThan here: ItemState, manifestName: String, fileSystem: FileSystem
    ) -> ItemState? {
        guard let there = ItemState.ofItem(at: place),
            there.identity.device != here.identity.device || there.identity.inode != here.identity.inode,
            let data = manifestData(at: place.appendingPathComponent(manifestName).path, fileSystem: fileSystem),
            let other = try? DocumentManifest(jsonData: data, path: place.path), other.documentIdentifier == identifier
        else { return nil }
        return there
    }

    /// The name in `folder` of the item with inode number `inode`, if there is one (one listing).
    private static func name(ofItem inode: UInt64, in folder: URL, fileSystem: FileSystem) -> String? {
        guard let fd = try? fileSystem.open(folder.path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return nil }
        defer { try? fileSystem.close(fd, name: folder.path) }
        return (try? fileSystem.names(ofInode: inode, inDirectory: fd, name: folder.path))?.first
    }

    /// The names in `folder`, through the seam; nil if it can't be listed.
    private static func names(in folder: URL, fileSystem: FileSystem) -> [String]? {
        guard let fd = try? fileSystem.open(folder.path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC) else { return nil }
        defer { try? fileSystem.close(fd, name: folder.path) }
        return try? fileSystem.contentsOfDirectory(fd, name: folder.path)
    }

    /// The bytes of the manifest at `path` (a regular file of at most the manifest's size limit,
    /// not followed through a link), through the seam; nil otherwise.
    private static func manifestData(at path: String, fileSystem: FileSystem) -> Data? {
        readRegularFile(atPath: path, limit: Int64(DocumentManifest.Limits.maximumSize), using: fileSystem)
    }

    /// Throws unless the item at `url` is this document or has no manifest that says otherwise:
    /// another document (`mv` of another package to this name while the save waited) is never
    /// replaced, nor kept as a conflict version of this one.
    func requireSameDocument(at url: URL, fileSystem: FileSystem) throws(DocumentKitError) {
        guard let format, let ours = state.withLock({ $0.manifest?.documentIdentifier }),
            let data = Self.manifestData(at: url.appendingPathComponent(format.manifestName).path, fileSystem: fileSystem),
            let theirs = (try? DocumentManifest(jsonData: data, path: url.path))?.documentIdentifier,
            theirs.lowercased() != ours.lowercased()
        else { return }
        throw DocumentKitError(
            .changedSinceRead, operation: .save, path: url.path, originalIsIntact: true,
            detail: "Another document (identifier \(theirs)) was put in its place while this save waited; it was not replaced. "
                + "The edits stay in memory.")
    }

    /// Writes the copy's own identifier in the manifest of `fields` where it still has the
    /// original's (a subclass that keeps the identifier in its content writes that back).
    func applyOwnIdentity(_ pending: DocumentIdentityChange?, to fields: inout DocumentManifest) {
        guard let change = pending ?? state.withLock({ $0.ownIdentity }), fields.documentIdentifier == change.old else { return }
        fields.documentIdentifier = change.new
    }

    /// Inside the save's coordinated write of `url`, before it writes: gives the package on disk
    /// the copy's own identifier (its manifest rewritten, its members linked as they are), so
    /// that the save keeps what it replaces in the copy's own history. A document whose base
    /// was the item on disk keeps it as its base.
    func takeOwnIdentity(
        _ change: DocumentIdentityChange, at url: URL, format: FormatDescription, options: SaveOptions
    ) throws(DocumentKitError) {
        let options = try options.replacingItem(at: url)
        guard options.itemToReplace != nil else { throw Self.itemGone(url) }
        let found = try readTree(at: url, fileSystem: options.fileSystem, keepingConflictCopies: true)
        var manifest = try DocumentManifest(package: found, manifestName: format.manifestName, packagePath: url.path)
        if manifest.documentIdentifier == change.old {
            manifest.documentIdentifier = change.new
            var tree = found
            tree[format.manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
            let base = state.withLock { $0.base }
            let wasBase = base.flatMap { base in baseOfItem(at: url).map { base.isStill($0) } } ?? false
            _ = try storedForm(of: tree, path: url.path).write(to: url, options: options)
            if wasBase {
                let now = baseOfItem(at: url)
                state.withLock { $0.base = now }
            }
        }
        state.withLock { state in
            state.ownIdentity = change
            state.manifest?.documentIdentifier = change.new
        }
    }
}
