#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import FormatVersioning
import SystemPackage
import Foundation

extension VersionStore {
    /// Adds a version of the item from its current contents, as `NSFileVersion.addOfItem`, under
    /// a coordinated read of the item. The same contents added twice give one version.
    ///
    /// - Parameters:
    ///   - itemURL: The item.
    ///   - origin: How the version came to be.
    ///   - isConflict: Whether it is an unresolved conflict version (kept until resolved).
    ///   - ancestorIdentifier: The version it and the current one descend from, when known.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the item or the store; nothing is added then.
    @discardableResult
    public func addVersion(
        ofItemAt itemURL: URL, origin: FileVersion.Origin = .added, isConflict: Bool = false, ancestorIdentifier: String? = nil
    ) throws(DocumentKitError) -> FileVersion {
        try coordinated(reading: itemURL) { () throws(DocumentKitError) in
            try makeVersion(VersionDraft(itemURL: itemURL, source: itemURL, origin: origin, isConflict: isConflict, ancestor: ancestorIdentifier))
        }
    }

    /// Adds a version of the item from other contents: a file or package at `sourceURL` (for
    /// example edits that could not be saved over the item).
    ///
    /// - Parameters:
    ///   - itemURL: The item.
    ///   - sourceURL: The file or package whose contents the version holds.
    ///   - origin: How the version came to be.
    ///   - isConflict: Whether it is an unresolved conflict version (kept until resolved).
    ///   - ancestorIdentifier: The version it and the current one descend from, when known.
    ///   - byMoving: Moves `sourceURL` into the store (it must be on the same file system)
    ///     instead of copying it.
    @discardableResult
    public func addVersion(
        ofItemAt itemURL: URL, withContentsOf sourceURL: URL, origin: FileVersion.Origin = .added, isConflict: Bool = false,
        byMoving: Bool = false, ancestorIdentifier: String? = nil
    ) throws(DocumentKitError) -> FileVersion {
        try coordinated(writing: itemURL) { () throws(DocumentKitError) in
            var draft = VersionDraft(itemURL: itemURL, source: sourceURL, origin: origin, isConflict: isConflict, ancestor: ancestorIdentifier)
            draft.moving = byMoving
            return try makeVersion(draft)
        }
    }

    /// What a new version is made of.
    struct VersionDraft {
        var itemURL: URL
        var source: URL
        var origin: FileVersion.Origin
        var isConflict: Bool
        var ancestor: String?
        var moving = false
        /// The tree to store instead of `source`'s (an adopted conflict version, assembled).
        var tree: FileWrapper?
        /// Recorded instead of this process's computer and user (adopted copies).
        var host: String??
        var user: String??
        var adoptedFrom: VersionRecord.AdoptedFrom?
        /// The version's date, instead of the source's modification time.
        var modified: Date?
        /// The digest its id is made from, instead of one of the contents.
        var digest: String?
        /// The document it belongs to, instead of the item's.
        var key: DocumentKey?

        init(itemURL: URL, source: URL, origin: FileVersion.Origin, isConflict: Bool, ancestor: String?) {
            self.itemURL = itemURL
            self.source = source
            self.origin = origin
            self.isConflict = isConflict
            self.ancestor = ancestor
        }
    }

    /// Builds the version in a hidden folder, writes its record last, and renames it into place.
    func makeVersion(_ draft: VersionDraft) throws(DocumentKitError) -> FileVersion {
        try prepareStore()
        let key = draft.key ?? documentKey(forItemAt: draft.itemURL)
        let (documentFolder, hold, names) = try prepareFolderListing(for: key)
        defer { withExtendedLifetime(hold) {} }
        let (record, existing, _) = try newRecord(for: draft, key: key, in: documentFolder)
        if let existing {
            if draft.moving { _ = try? removeItem(draft.source.path, in: AT_FDCWD, using: fileSystem) }
            return existing
        }
        let built = try buildEntry(record, in: documentFolder, key: key, itemURL: draft.itemURL) {
            (entry: URL, contents: URL) throws(DocumentKitError) -> [SourceIdentity: String]? in
            if draft.moving {
                do throws(Errno) { try fileSystem.rename(draft.source.path, in: AT_FDCWD, to: contents.path, in: AT_FDCWD) } catch {
                    throw DocumentKitError(error, operation: .save, path: draft.source.path, step: "moving the contents into the version store")
                }
                return nil
            }
            if let tree = draft.tree {
                try Self.detached(tree).write(to: contents, options: SaveOptions(durability: durability, fileSystem: fileSystem))
                return nil
            }
            return try copyPrivately(draft.source, into: entry, key: key)
        }
        if !draft.isConflict { prune(key: key, itemURL: draft.itemURL, listed: names.map { $0.adding(built.0.persistentIdentifier) }) }
        return built.0
    }

    /// Makes the entry of `record`: a hidden folder in which `fill` puts the contents (`item`),
    /// then the record, then the rename to the version's id. A version is complete in the store
    /// when this returns; the entry and the version's contents URL are returned.
    func buildEntry(
        _ record: VersionRecord, in documentFolder: URL, key: DocumentKey, itemURL: URL,
        fill: (_ entry: URL, _ contents: URL) throws(DocumentKitError) -> [SourceIdentity: String]?
    ) throws(DocumentKitError) -> (FileVersion, URL) {
        let isPackage = record.kind == "package"
        let temporary = try createEntry(in: documentFolder)
        var placed = false
        defer { if !placed { _ = try? removeItem(temporary.path, in: AT_FDCWD, using: fileSystem) } }
        let made = try fill(temporary, temporary.appendingPathComponent("item", isDirectory: isPackage))
        try writeRecord(record, inNewEntry: temporary)
        let final = documentFolder.appendingPathComponent(record.id, isDirectory: true)
        do { try fileSystem.rename(temporary.path, in: AT_FDCWD, to: final.path, in: AT_FDCWD) } catch {
            if let existing = existingVersion(record.id, in: documentFolder, itemURL: itemURL) { return (existing, final) }
            throw DocumentKitError(error, operation: .save, path: final.path, step: "putting the new version in place")
        }
        placed = true
        try synchronize(documentFolder, "flushing the folder that names the new version")
        if let made {
            let prefix = final.path + "/"
            sharing.replace(key.folderName, with: made.mapValues { (relative: String) -> String in prefix + relative })
            sharing.rememberPlaced(final.path, of: key.folderName)
        }
        return (Self.version(from: record, itemURL: itemURL, contents: final.appendingPathComponent("item", isDirectory: isPackage)), final)
    }

    /// Copies the item at `source` into `entry` as `item`, sharing nothing with it (see ``PrivateCopy``).
    func copyPrivately(_ source: URL, into entry: URL, key: DocumentKey) throws(DocumentKitError) -> [SourceIdentity: String] {
        let parent = try openFolder(source.deletingLastPathComponent(), "opening the folder of the item to keep")
        let entryFolder = try openFolder(entry, "opening the new version")
        let newest = newestEntry(in: folder(for: key), key: key)
        var copier = PrivateCopy(fileSystem: fileSystem, durable: durability.flushesEachItem, itemPath: source.path, known: sharing.lookup(key.folderName))
        try copier.copy(
            source.lastPathComponent, in: parent.rawValue, sourcePath: source.path, as: "item", in: entryFolder.rawValue,
            destinationPath: "item", previous: newest.map { (descriptor: Descriptor) -> (directory: CInt, name: String) in (descriptor.rawValue, "item") })
        // The entry's folder is flushed with its record (``writeRecord(_:inNewEntry:)``).
        return withExtendedLifetime((newest, entryFolder)) { copier.made }
    }

    /// The version entry a new version of the document links its unchanged files from: the one
    /// this process put in place last, if it is still there; else the one put in place last (the
    /// latest `ctime`: the rename into place sets it) among those of the newest second (ids start
    /// with their date), so a document with thousands of versions is not looked at whole. A hint:
    /// linking from any version would be correct, only slower.
    func newestEntry(in documentFolder: URL, key: DocumentKey) -> Descriptor? {
        if let placed = sharing.placedEntry(of: key.folderName), let entry = try? openFolder(URL(fileURLWithPath: placed), "opening the newest version") {
            return entry
        }
        guard let folder = try? openFolder(documentFolder, "listing versions"),
            let names = try? fileSystem.contentsOfDirectory(folder.rawValue, name: documentFolder.path)
        else { return nil }
        var newest: (name: String, time: Int64)?
        for name in VersionIdentifier.ofNewestSecond(among: names) {
            guard let status = try? fileSystem.status(of: name, in: folder.rawValue) else { continue }
            if newest == nil || status.changeTime > newest!.time { newest = (name, status.changeTime) }
        }
        guard let newest else { return nil }
        return try? openFolder(documentFolder.appendingPathComponent(newest.name, isDirectory: true), "opening the newest version")
    }

    /// `tree` with every regular file's bytes in memory: written into the store, it is copied,
    /// never hard-linked from where it was read.
    static func detached(_ tree: FileWrapper) throws(DocumentKitError) -> FileWrapper {
        switch tree.kind {
        case .directory:
            var children: [String: FileWrapper] = [:]
            for (name, child) in tree.fileWrappers ?? [:] { children[name] = try detached(child) }
            return FileWrapper(directoryWithFileWrappers: children, permissions: tree.permissions)
        case .regularFile:
            return FileWrapper(regularFileWithContents: try tree.regularFileContents, permissions: tree.permissions)
        case .symbolicLink:
            return tree
        }
    }

    /// The folder of `key`'s versions, created if missing, and a shared hold on its lock file
    /// (`locks/KEY`):
    /// while anyone holds it, no process removes a hidden entry there. Whoever gets the lock
    /// exclusively first completes or removes the entries that killed processes left.
    func prepareFolder(for key: DocumentKey) throws(DocumentKitError) -> (URL, Descriptor) {
        let (folder, hold, _) = try prepareFolderListing(for: key)
        return (folder, hold)
    }

    /// ``prepareFolder(for:)``, and the folder's versions (their number and the least id) when this
    /// process found no other holding it and cleaned it (nil otherwise): what a save's pruning starts from.
    func prepareFolderListing(for key: DocumentKey) throws(DocumentKitError) -> (URL, Descriptor, VersionNames?) {
        let documentFolder = folder(for: key)
        try makeFolder(documentFolder, "Can't create the document's folder in the version store")
        try makeFolder(locksURL, "Can't create the version store's locks")
        let lockPath = lockPath(for: key)
        let hold: Descriptor
        var names: VersionNames?
        do throws(Errno) {
            hold = Descriptor(owning: try fileSystem.open(lockPath, in: AT_FDCWD, flags: O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o644))
            if (try? fileSystem.lockExclusivelyWithoutWaiting(hold.rawValue, name: lockPath)) != nil {
                names = removeAbandonedEntries(in: documentFolder, key: key)
            }
            try fileSystem.lockShared(hold.rawValue, name: lockPath)
        } catch {
            throw DocumentKitError(error, operation: .save, path: lockPath, step: "locking the document's folder in the version store")
        }
        return (documentFolder, hold, names)
    }

    /// The lock file of `key`'s folder (`locks/KEY`, see ``prepareFolder(for:)``).
    func lockPath(for key: DocumentKey) -> String {
        locksURL.path + "/" + key.folderName
    }

    /// A new hidden entry (`.new-RANDOM`, or `.swap-RANDOM` for `purpose` "swap") in
    /// `documentFolder`, for a version being built (under the folder's shared hold, see ``prepareFolder(for:)``).
    func createEntry(in documentFolder: URL, purpose: String = "new") throws(DocumentKitError) -> URL {
        let temporary = temporaryEntryURL(in: documentFolder, purpose: purpose)
        do { try fileSystem.makeDirectory(temporary.path, in: AT_FDCWD, mode: 0o777) } catch {
            throw DocumentKitError(error, operation: .save, path: temporary.path, step: "creating a version", originalIsIntact: true)
        }
        return temporary
    }

    /// The record of a new version made from `draft.source`: its kind, modification time and
    /// content digest name it (see `VersionIdentifier`); or the version, when the store has it
    /// already. `isContentNamed`: the id's digits are those of the source's content digest.
    func newRecord(for draft: VersionDraft, key: DocumentKey, in documentFolder: URL) throws(DocumentKitError)
        -> (record: VersionRecord, existing: FileVersion?, isContentNamed: Bool)
    {
        let status: FileStatus
        do { status = try fileSystem.status(of: draft.source.path, in: AT_FDCWD) } catch {
            throw DocumentKitError(error, operation: .read, path: draft.source.path, step: "reading the item to keep as a version", originalIsIntact: true)
        }
        let isPackage = draft.tree?.isDirectory ?? (status.kind == .directory)
        let modified = draft.modified ?? Date(timeIntervalSince1970: Double(status.modificationTime) / 1e9)
        let digest = draft.digest ?? contentDigest(of: draft.source, isPackage: isPackage)
        let id = VersionIdentifier.make(date: modified, digest: digest)
        let record = { (id: String) in
            VersionRecord(
                id: id, documentIdentifier: key.identifier, kind: isPackage ? "package" : "file",
                name: draft.itemURL.lastPathComponent, origin: draft.origin, modified: RecordDate.string(modified),
                host: draft.host ?? self.savingComputerName, user: draft.user ?? self.savingUser, conflict: draft.isConflict,
                resolved: false, discardable: false, ancestor: draft.ancestor, adoptedFrom: draft.adoptedFrom, resolution: nil)
        }
        if let existing = existingVersion(id, in: documentFolder, itemURL: draft.itemURL) {
            // The manifest names the contents only if the members match it (a hand-edited member
            // leaves the manifest as it was): else these are other contents, kept as a version of their own.
            guard draft.digest == nil, draft.tree == nil, isPackage, !membersMatchManifest(of: draft.source) else {
                return (record(id), existing, false)
            }
            return (record(VersionIdentifier.make(date: modified, digest: nil)), nil, false)
        }
        if exists(documentFolder.appendingPathComponent(id)) {
            // A damaged entry holds the name.
            return (record(VersionIdentifier.make(date: modified, digest: nil)), nil, false)
        }
        return (record(id), nil, draft.digest == nil && draft.tree == nil && digest.map { $0.count >= 16 } == true)
    }

    /// Whether something is at `url` (`lstat` through the seam).
    func exists(_ url: URL) -> Bool { (try? fileSystem.status(of: url.path, in: AT_FDCWD)) != nil }

    /// The version `id` if it is in `folder`, whole, in its current state (the folder is listed
    /// for its state entries only when the version is there: a new version's check costs a `stat`).
    func existingVersion(_ id: String, in folder: URL, itemURL: URL) -> FileVersion? {
        let entry = folder.appendingPathComponent(id, isDirectory: true)
        guard let own = try? readRecord(in: entry), own.id == id else { return nil }
        let contents = entry.appendingPathComponent("item", isDirectory: own.kind == "package")
        let states = stateEntries(of: id, in: folder)
        guard exists(contents), let record = states.isEmpty ? own : try? currentRecord(of: entry, states: states) else { return nil }
        return Self.version(from: record, itemURL: itemURL, contents: contents)
    }

    /// Writes the record of an entry not in place yet and then flushes the entry's folder once,
    /// with whatever was put in it before: the entry is complete on disk before it is renamed into
    /// place. The record is flushed under a temporary name and renamed to `record.json`, so that a
    /// process completing interrupted entries (`Formats/version-store/v3`) never sees a record
    /// that is not on disk; nothing else is there to replace, so no more is needed.
    /// `flushedLater`: the caller flushes the entry and its folder later (an exchange flushes
    /// them before the entry can be completed): the record is flushed, its folder isn't.
    func writeRecord(_ record: VersionRecord, inNewEntry entry: URL, flushedLater: Bool = false) throws(DocumentKitError) {
        let pending = try beginRecord(record, inNewEntry: entry)
        // Batched: the contents and the record reach the disk in one flush before the record is named.
        try pending.finish(syncingFileSystemFirst: durability == .durableBatched && !flushedLater)
        // Batched, the record's name is flushed with the entry's rename into place (``synchronize(_:)``).
        if durability.flushesEachItem, !flushedLater {
            do { try fileSystem.synchronizeDirectory(pending.folder.rawValue, name: entry.path) } catch {
                throw DocumentKitError(error, operation: .save, path: pending.path, step: "writing the new version's record", originalIsIntact: true)
            }
        }
    }

    /// Writes `record` to a temporary file in the new entry `entry` and, in a store that flushes
    /// each item, starts its writeback; ``PendingRecord/finish(syncingFileSystemFirst:)`` flushes
    /// and names it (what ``writeRecord(_:inNewEntry:flushedLater:)`` does at once).
    func beginRecord(_ record: VersionRecord, inNewEntry entry: URL) throws(DocumentKitError) -> PendingRecord {
        let folder = try openFolder(entry, "opening the new version")
        let temporary = TemporaryName.make(for: VersionRecord.fileName, purpose: "tmp")
        let path = entry.appendingPathComponent(VersionRecord.fileName).path
        do throws(Errno) {
            let file = try fileSystem.open(temporary, in: folder.rawValue, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
            do throws(Errno) {
                try fileSystem.write(file, record.encoded(), name: path)
                if durability.flushesEachItem { try? fileSystem.startWriteback(file, name: path) }
            } catch {
                try? fileSystem.close(file, name: path)
                throw error
            }
            return PendingRecord(file: file, temporary: temporary, in: folder, path: path, flushes: durability.flushesEachItem, fileSystem: fileSystem)
        } catch {
            throw DocumentKitError(error, operation: .save, path: path, step: "writing the new version's record", originalIsIntact: true)
        }
    }

    /// Flushes a folder's entries (durable stores only); a batched store flushes the file
    /// system, and so also the names written in the entries below it.
    /// - Throws: When the folder can't be opened or the flush fails (an I/O error): what was
    ///   named there may not survive a power loss, and `step` says what that was.
    func synchronize(_ folder: URL, _ step: String = "flushing the version store's folder") throws(DocumentKitError) {
        guard durability.isDurable else { return }
        let fd = try openFolder(folder, step)
        do throws(Errno) {
            if durability == .durableBatched {
                try fileSystem.synchronizeFileSystem(fd.rawValue, name: folder.path)
            } else {
                try fileSystem.synchronizeDirectory(fd.rawValue, name: folder.path)
            }
        } catch {
            throw DocumentKitError(error, operation: .save, path: folder.path, step: step)
        }
    }
}
