#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Logging
import SystemPackage

extension VersionStore {
    /// Replaces the item with `version`'s contents (restore), itself a versioned save: the
    /// current contents are kept first as a version with origin `keepingCurrentAs` (nil keeps
    /// nothing). Runs under a coordinated write of the item; atomic like every save.
    ///
    /// - Returns: The item's URL.
    @discardableResult
    public func replaceItem(
        at itemURL: URL, with version: FileVersion, keepingCurrentAs origin: FileVersion.Origin? = .save
    ) throws(DocumentKitError) -> URL {
        guard !version.isCurrent else { return itemURL }
        return try coordinated(writing: itemURL) { () throws(DocumentKitError) in
            waitUntilComplete(version)
            // Read into memory: the store's files are copied into the item, never linked.
            let tree = try Self.detached(FileWrapper(contentsOf: version.url, fileSystem: fileSystem))
            try save(tree, to: itemURL, options: SaveOptions(durability: durability, fileSystem: fileSystem), keepingReplacedAs: origin)
            return itemURL
        }
    }

    /// Saves `tree` at `itemURL` (see ``/FilePackages/FileWrapper/write(to:options:)``) and keeps what it
    /// replaces as a version with origin `origin` (nil keeps nothing), without coordinating:
    /// call it inside a coordinated write of the item.
    ///
    /// No later write to the item changes the version: its files are never the item's. A package
    /// replaced by a package is exchanged into the store by the save's own swap (one
    /// `renameat2(RENAME_EXCHANGE)`: no copy; files it shares with the new package are then
    /// replaced in the version by links to another version's files with the same bytes, or
    /// copies); a recovery completes the version if the process dies after the swap. Otherwise
    /// (a file, a conflict, a store on another mount) the version is made complete in the store
    /// before the item is replaced: private copies of the item's files, or links to another
    /// version's files with the same bytes. If the store can't take it, nothing is saved and the
    /// error says why (the item is intact).
    ///
    /// - Returns: The tree as saved, and the version kept (nil when nothing was replaced, or when
    ///   a replaced package is in the store but could not be named yet: a warning is logged).
    ///   With ``VersionCompletion/afterSaveReturns``, a version kept by exchange is still being
    ///   completed: its `url` is where it will be (see there).
    @discardableResult
    public func save(
        _ tree: FileWrapper, to itemURL: URL, options: SaveOptions = SaveOptions(),
        keepingReplacedAs origin: FileVersion.Origin?, isConflict: Bool = false, ancestorIdentifier: String? = nil
    ) throws(DocumentKitError) -> (saved: FileWrapper, kept: FileVersion?) {
        let itemStatus: FileStatus?
        do { itemStatus = try fileSystem.status(of: itemURL.path, in: AT_FDCWD) } catch {
            guard error == .noSuchFileOrDirectory else {
                throw DocumentKitError(error, operation: .save, path: itemURL.path, step: "reading the item to keep as a version", originalIsIntact: true)
            }
            itemStatus = nil
        }
        guard let origin, let itemStatus else {
            return (try tree.write(to: itemURL, options: options), nil)
        }
        let key = documentKey(forItemAt: itemURL)
        // The version a save that returned is still completing comes first (this process reads its own saves).
        waitForPendingVersions(of: key)
        var kept: FileVersion?
        var added: URL?
        let hold: Descriptor
        var listed: VersionNames?
        var exchanged: (saved: FileWrapper, entry: URL, folderFlushed: Bool)?
        var draft = VersionDraft(itemURL: itemURL, source: itemURL, origin: origin, isConflict: isConflict, ancestor: ancestorIdentifier)
        if isConflict { (draft.host, draft.user) = (.some(nil), .some(nil)) }  // another process wrote it
        let documentFolder: URL
        let record: VersionRecord
        var exchangeDigest: String?
        do throws(DocumentKitError) {
            try prepareStore()
            let prepared = try prepareFolderListing(for: key)
            (documentFolder, hold, listed) = prepared
            if versionCompletion == .afterSaveReturns, !isConflict {
                // The versions the last save kept, pruned now that they are complete, inside this
                // save's coordinated write (the completion runs outside any).
                prune(key: key, itemURL: itemURL, listed: listed)
            }
            let made = try newRecord(for: draft, key: key, in: documentFolder)
            (record, kept) = (made.record, made.existing)
            if made.existing == nil {
                exchangeDigest = self.exchangeDigest(tree, replacing: itemStatus, record: record, isContentNamed: made.isContentNamed)
            }
        } catch {
            throw Self.versionNotKept(error, itemURL: itemURL)
        }
        if let exchangeDigest {
            // Its own errors: the store's as the copy's below, the save's as they are.
            exchanged = try saveKeepingByExchange(
                tree, newDigest: exchangeDigest, to: itemURL, options: options, record: record, key: key, in: documentFolder)
        }
        if kept == nil, exchanged == nil {
            do throws(DocumentKitError) {
                let built = try buildEntry(record, in: documentFolder, key: key, itemURL: itemURL) {
                    (entry: URL, _: URL) throws(DocumentKitError) -> [SourceIdentity: String]? in
                    try copyPrivately(itemURL, into: entry, key: key)
                }
                (kept, added) = (built.0, built.1)
            } catch {
                throw Self.versionNotKept(error, itemURL: itemURL)
            }
        }
        let saved: FileWrapper
        if let exchanged {
            saved = exchanged.saved
            // A replaced package sharing members with the new one (unchanged members the save
            // linked) is completed now: its rebuild unlinks the shared names, which moves the
            // change time of the document's own members, and a reader of the document (in any
            // process) that had looked at them would find them changed. Not so outside the save's
            // coordinated write.
            if versionCompletion == .afterSaveReturns, !sharesMembers(exchanged.entry) {
                // The entry's name in the document's folder reaches the disk before the answer
                // (flushed before the exchange, with the new package, or now): the replaced state
                // stays reachable if the power fails before the completion.
                if !exchanged.folderFlushed { try synchronize(documentFolder, "flushing the folder that names the replaced version") }
                completeLater(key) { [self] in
                    _ = completeExchange(exchanged.entry, record: record, key: key, in: documentFolder, itemURL: itemURL)
                    withExtendedLifetime(hold) {}
                }
                // Where it will be (a listing in this process waits for it).
                let contents = documentFolder.appendingPathComponent(record.id, isDirectory: true).appendingPathComponent("item", isDirectory: true)
                return (saved, Self.version(from: record, itemURL: itemURL, contents: contents))
            }
            kept = completeExchange(exchanged.entry, record: record, key: key, in: documentFolder, itemURL: itemURL)
        } else {
            do { saved = try tree.write(to: itemURL, options: options) } catch {
                // Not saved: the version just kept is the item as it still is.
                if error.originalIsIntact == true, let added { try? removeEntry(added) }
                throw error
            }
        }
        withExtendedLifetime(hold) {}
        if added != nil { sharing.refresh(key.folderName, current: fileStatuses(under: itemURL)) }
        if !isConflict, versionCompletion == .beforeSaveReturns {
            prune(key: key, itemURL: itemURL, listed: listed.map { names in kept.map { names.adding($0.persistentIdentifier) } ?? names })
        }
        return (saved, kept)
    }

    /// A failure to keep the replaced version, as the save reports it: nothing was saved.
    static func versionNotKept(_ error: DocumentKitError, itemURL: URL) -> DocumentKitError {
        var error = error
        error.operation = .save
        error.originalIsIntact = true
        if error.path != itemURL.path, error.detail?.contains(itemURL.path) != true {
            let reason = error.detail.map { " " + $0 } ?? ""
            error.detail = "The version it replaces could not be kept in the version store, so it was not saved (\(error.path)).\(reason)"
            error.path = itemURL.path
        }
        return error
    }

    /// The status of every regular file at or under `url` (best effort).
    func fileStatuses(under url: URL) -> [FileStatus] {
        var result: [FileStatus] = []
        func walk(_ name: String, in directory: CInt) {
            guard let status = try? fileSystem.status(of: name, in: directory) else { return }
            if status.kind == .regular { result.append(status) }
            guard status.kind == .directory,
                let fd = try? fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            else { return }
            defer { Glibc.close(fd) }
            for child in (try? fileSystem.contentsOfDirectory(fd, name: name)) ?? [] { walk(child, in: fd) }
        }
        walk(url.path, in: AT_FDCWD)
        return result
    }

    /// Renames a complete hidden entry (record and contents) to `id`; if `id` is there already,
    /// removes the hidden one. False when neither could be done.
    func completeEntry(_ temporary: URL, id: String, in folder: URL) -> Bool {
        let final = folder.appendingPathComponent(id, isDirectory: true)
        if (try? fileSystem.rename(temporary.path, in: AT_FDCWD, to: final.path, in: AT_FDCWD)) != nil { return true }
        if existingVersion(id, in: folder, itemURL: final) != nil {
            _ = try? removeItem(temporary.path, in: AT_FDCWD, using: fileSystem)
            return true
        }
        return false
    }

    /// Marks a conflict version resolved, recording how: it leaves the unresolved conflicts and
    /// stays as an older version (prunable from now on). Runs under a coordinated write of the item.
    @discardableResult
    public func markResolved(_ version: FileVersion, as resolution: FileVersion.Resolution) throws(DocumentKitError) -> FileVersion {
        guard !version.isCurrent else { return version }
        return try coordinated(writing: version.itemURL) { () throws(DocumentKitError) in
            waitUntilComplete(version)
            let entry = version.url.deletingLastPathComponent()
            var record = try currentRecord(of: entry)
            guard !record.resolved || !record.conflict else { return Self.version(from: record, itemURL: version.itemURL, contents: version.url) }
            record.resolved = true
            record.resolution = VersionRecord.ResolutionRecord(how: resolution, date: RecordDate.string(Date()), host: savingComputerName)
            try writeState(record, of: entry)
            return Self.version(from: record, itemURL: version.itemURL, contents: version.url)
        }
    }

    /// Removes a version from the store. Removing the current version is an error, and so is
    /// removing an unresolved conflict without `evenIfUnresolvedConflict`.
    public func remove(_ version: FileVersion, evenIfUnresolvedConflict: Bool = false) throws(DocumentKitError) {
        guard !version.isCurrent else {
            throw DocumentKitError(.invalidArgument, operation: .remove, path: version.url.path, detail: "The current version can't be removed from the version store.")
        }
        guard !version.isUnresolvedConflict || evenIfUnresolvedConflict else {
            throw DocumentKitError(.invalidArgument, operation: .remove, path: version.url.path,
                detail: "Version \(version.persistentIdentifier) is an unresolved conflict: resolve it first, or ask explicitly to discard it.")
        }
        try coordinated(writing: version.itemURL) { () throws(DocumentKitError) in
            waitUntilComplete(version)
            try removeEntry(version.url.deletingLastPathComponent())
        }
    }

    /// Removes every version but the current one. Unresolved conflicts stay unless
    /// `includingUnresolvedConflicts` is true.
    public func removeOtherVersions(ofItemAt itemURL: URL, includingUnresolvedConflicts: Bool = false) throws(DocumentKitError) {
        try coordinated(writing: itemURL) { () throws(DocumentKitError) in
            for version in try versions(ofItemAt: itemURL).others where includingUnresolvedConflicts || !version.isUnresolvedConflict {
                try removeEntry(version.url.deletingLastPathComponent())
            }
        }
    }

    /// Renames the entry aside (so that it vanishes at once, in whatever state it was), removes
    /// it, then removes its state entries (a removal that dies before leaves them orphaned: see
    /// ``removeOrphanedStates(in:names:)``).
    func removeEntry(_ entry: URL) throws(DocumentKitError) {
        let aside = temporaryEntryURL(in: entry.deletingLastPathComponent(), purpose: "removing")
        forgetRecord(in: entry)
        do { try fileSystem.rename(entry.path, in: AT_FDCWD, to: aside.path, in: AT_FDCWD) } catch {
            if error == .noSuchFileOrDirectory { return }
            throw DocumentKitError(error, operation: .remove, path: entry.path, step: "removing the version")
        }
        try synchronize(entry.deletingLastPathComponent(), "flushing the folder the version was removed from")
        _ = try? removeItem(aside.path, in: AT_FDCWD, using: fileSystem)
        try removeStates(of: entry)
    }

    /// Applies ``pruning`` to the versions of `key`: never to unresolved conflicts. `listed`: the
    /// folder's versions as the caller found them under its hold (a save: before it added its
    /// version, with that version's id added), else they are listed here. A version another
    /// process added meanwhile is pruned by the next save.
    func prune(key: DocumentKey, itemURL: URL, now: Date = Date(), listed: VersionNames? = nil) {
        // The ids hold the dates: a listing of the folder tells whether anything may go.
        var names = listed ?? VersionNames(self.names(inFolderAt: folder(for: key).path) ?? [])
        if names.oldestDate == nil, names.count > 0 {
            // The least id's date can't be read (a name made by hand): every id's is looked at.
            names = VersionNames(self.names(inFolderAt: folder(for: key).path) ?? [], decodingEvery: true)
        }
        guard pruning.mayRemove(fromVersionsCount: names.count, oldest: names.oldestDate, now: now) else { return }
        let (versions, _) = storedVersions(of: key, itemURL: itemURL, reporting: false)
        let candidates = versions.map { version in
            PruningSchedule.Candidate(
                id: version.persistentIdentifier, date: version.modificationDate ?? now,
                bytes: pruning.maximumBytes == nil ? 0 : Self.uniqueBytes(of: version.url),
                isProtected: version.isUnresolvedConflict)
        }
        let byID = Dictionary(versions.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { first, _ in first })
        for id in pruning.versionsToRemove(from: candidates, now: now) {
            guard let version = byID[id], !version.isUnresolvedConflict else { continue }
            try? removeEntry(version.url.deletingLastPathComponent())
        }
    }

    /// Prunes the versions of the item now (saves prune after every version they keep, or, with
    /// ``VersionCompletion/afterSaveReturns``, before: the last save's version waits for the next).
    public func prune(ofItemAt itemURL: URL, now: Date = Date()) throws(DocumentKitError) {
        try coordinated(writing: itemURL) { () throws(DocumentKitError) in
            let key = documentKey(forItemAt: itemURL)
            waitForPendingVersions(of: key)
            prune(key: key, itemURL: itemURL, now: now)
        }
    }

    /// Bytes a version takes that nothing else shares: files with one link.
    static func uniqueBytes(of url: URL) -> Int64 {
        var total: Int64 = 0
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return 0 }
        if (info.st_mode & S_IFMT) != S_IFDIR { return info.st_nlink <= 1 ? Int64(info.st_blocks) * 512 : 0 }
        guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return 0 }
        while let name = enumerator.nextObject() as? String {
            if lstat(url.path + "/" + name, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR, info.st_nlink <= 1 {
                total += Int64(info.st_blocks) * 512
            }
        }
        return total
    }
}
