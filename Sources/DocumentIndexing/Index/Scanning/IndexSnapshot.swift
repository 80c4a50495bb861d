import DocumentKitSystem
import Foundation

/// The index's knowledge of a library: every entry with its validators, and the stamps of the
/// non-package folders. ``refresh(using:listingOnly:)`` brings it up to date with the disk and
/// says what changed.
struct IndexSnapshot: Sendable {
    var records = RecordTable()
    /// The package stamps of entries known to the persisted index but not loaded (a listing
    /// refresh loads only these of the folders whose stamp changed; a record is loaded when needed).
    var known: [String: FileStamp] = [:]
    /// The stamps at which the non-package folders were listed.
    var folders: [String: FileStamp] = [:]
    /// The stamps at which a folder's names were accounted for by a change of this or another
    /// process, without a listing (``DocumentIndex/noteChanges(at:since:)``): a listing refresh
    /// takes them as listed, a full refresh lists the folder again.
    var accounted: [String: FileStamp] = [:]

    /// Walks the library from its top: lists the folders whose stamp changed (the others keep
    /// the names known), and, unless `listingOnly`, stats every known package and re-reads those
    /// whose package or manifest stamp changed. A ``known`` entry is loaded with `load` only when
    /// its package stamp changed or it is gone.
    mutating func refresh(
        using reader: EntryReader, listingOnly: Bool = false, load: (String) -> EntryRecord? = { _ in nil }
    ) -> Changes {
        // Every folder as listed (or accounted for): nothing to walk. A live index after an event
        // in a library of 100,000 documents must not loop over them all.
        if listingOnly, known.isEmpty, !folders.isEmpty, folders.allSatisfy({ folder, stamp in
            let now = reader.folderStamp(folder)
            return now != nil && (now == stamp || now == accounted[folder])
        }) {
            return Changes()
        }
        var changes = Changes()
        var childrenOf: [String: (packages: [String], folders: [String])] = [:]
        for path in records.keys { childrenOf[parentPath(of: path), default: ([], [])].packages.append(path) }
        for path in known.keys where records[path] == nil {
            childrenOf[parentPath(of: path), default: ([], [])].packages.append(path)
        }
        for path in folders.keys where !path.isEmpty { childrenOf[parentPath(of: path), default: ([], [])].folders.append(path) }

        // One readdir of the version store instead of a stat per entry of its conflict folder.
        let conflictFolders = listingOnly ? nil : reader.conflictFolderNames()
        let conflictIdentifiers = conflictFolders.map(EntryReader.uuidIdentifiers(inConflictFolders:))
        let library = listingOnly ? nil : reader.openLibrary()
        // The packages seen in folders listed now; every known one of a folder walked unchanged
        // counts as seen through `wholeFolders` (no set of 100,000 names to fill and look through).
        var seenPackages = Set<String>()
        var wholeFolders = Set<String>()
        var seenFolders = Set<String>()
        var queue = [""]
        while let folder = queue.popLast() {
            let known = folders[folder]
            let stamp = reader.folderStamp(folder)
            guard let stamp else { continue }
            seenFolders.insert(folder)
            if known == stamp || (listingOnly && accounted[folder] == stamp) {
                let children = childrenOf[folder] ?? ([], [])
                queue += children.folders
                wholeFolders.insert(folder)
                guard !listingOnly else { continue }
                let stamps = reader.stamps(of: children.packages, in: library)
                for (index, path) in children.packages.enumerated() {
                    if !self.known.isEmpty { materialize(path, load) }
                    // Most entries: as read, no conflict folder. Checked in place, without a copy of the record.
                    if let conflictIdentifiers, records.isUnchanged(path, stamps[index], conflictIdentifiers: conflictIdentifiers) { continue }
                    revalidate(path, using: reader, into: &changes, conflictFolders: conflictFolders, library: library, stamps: stamps[index])
                }
                continue
            }
            guard let listing = reader.list(folder) else { continue }
            folders[folder] = listing.stamp
            changes.foldersChanged[folder] = listing.stamp
            forgetAccounted(folder, into: &changes)
            queue += listing.folders
            var toCheck: [String] = []
            var listed: [FileStamp] = []
            var toRead: [String] = []
            for (path, packageStamp) in listing.packages {
                seenPackages.insert(path)
                if records[path] == nil, let knownStamp = self.known[path] {
                    if listingOnly && knownStamp == packageStamp { continue }
                    materialize(path, load)
                }
                if records[path] == nil {
                    toRead.append(path)
                } else if !listingOnly || records[path]?.package != packageStamp {
                    toCheck.append(path)
                    listed.append(packageStamp)
                }
            }
            // New packages (every one, the first time a library is indexed), read over the cores.
            for record in reader.read(toRead) {
                guard let record else { continue }
                records[record.relativePath] = record
                changes.noteAdded(record)
            }
            // The listing took each package's stamp: only the manifests are stat'ed again.
            let stamps = reader.stamps(of: toCheck, packages: listed, in: library)
            for (index, path) in toCheck.enumerated() {
                revalidate(path, using: reader, into: &changes, conflictFolders: conflictFolders, library: library, stamps: stamps[index])
            }
        }
        // Gone: what a folder listed now no longer holds, and everything in a folder not reached.
        for (folder, children) in childrenOf where !wholeFolders.contains(folder) {
            for path in children.packages where !seenPackages.contains(path) {
                if let record = records.removeValue(forKey: path) {
                    changes.noteRemoved(record)
                } else if self.known[path] != nil, let record = load(path) {
                    changes.noteRemoved(record)
                }
            }
        }
        known = [:]
        for path in Array(folders.keys) where !seenFolders.contains(path) {
            folders[path] = nil
            changes.foldersChanged[path] = .some(nil)
            forgetAccounted(path, into: &changes)
        }
        return changes
    }

    /// Moves a ``known`` entry into ``records``, loading it.
    private mutating func materialize(_ path: String, _ load: (String) -> EntryRecord?) {
        guard records[path] == nil, known.removeValue(forKey: path) != nil, let record = load(path) else { return }
        records[path] = record
    }

    /// Checks one known package's stamps and re-reads it if one changed (or removes it if gone).
    /// `conflictFolders` is the version store's listing of this refresh (nil: stat the entry's
    /// folder); `library` the library folder open for stats relative to it (nil: by absolute path);
    /// `stamps` the package's stamps if the caller took them (``EntryReader/stamps(of:in:)``).
    mutating func revalidate(
        _ path: String, using reader: EntryReader, into changes: inout Changes, force: Bool = false,
        conflictFolders: Set<String>? = nil, library: Descriptor? = nil, stamps: PackageStamps? = nil
    ) {
        guard let old = records[path] else {
            if let record = reader.read(path) {
                records[path] = record
                changes.noteAdded(record)
            }
            return
        }
        guard let package = stamps.map(\.package) ?? reader.packageStamp(path, in: library) else {
            records[path] = nil
            changes.noteRemoved(old)
            markUnlisted(parentPath(of: path), into: &changes)
            return
        }
        // A store of format 2 resolves a conflict by rewriting its record deep in the store, which
        // no stamp the index keeps shows (format 3 adds a state entry beside it, which the stamp
        // of the document's folder in the store shows): a document in conflict (rare) is counted
        // again at each check. Likewise a
        // member a sync engine delivers into a subfolder of an incomplete package changes neither
        // the package folder nor the manifest: an incomplete document (rare) is read again. A
        // current one with members in subfolders is unchanged only while those folders are.
        var readAgain = false
        if case .unresolvedConflicts = old.state { readAgain = true }
        if case .incomplete = old.state { readAgain = true }
        let packageUnchanged = !force && !readAgain && package == old.package
            && (stamps.map(\.manifest) ?? reader.manifestStamp(path, in: library)) == old.manifest
            && reader.memberFoldersUnchanged(old, in: library)
        if packageUnchanged {
            if reader.conflictsUnchanged(old, names: conflictFolders) { return }
            // Only the document's folder in the version store changed (a version kept after a save,
            // a conflict added; a document in conflict is read again whole, above): its conflicts are
            // counted again, the package not read (a member rewritten in place at its path changes no
            // stamp kept here: as when nothing changed, it is not seen).
            if let recounted = reader.recountingConflicts(of: old) {
                records[path] = recounted
                if recounted == old { return }
                if recounted.state == old.state { changes.noteRestamped(recounted) } else { changes.noteChanged(recounted) }
                return
            }
        }
        guard let record = reader.read(path) else {
            records[path] = nil
            changes.noteRemoved(old)
            markUnlisted(parentPath(of: path), into: &changes)
            return
        }
        records[path] = record
        // Only the stamp of its folder in the version store (a version added after the document
        // was replaced, as a save that exchanges the replaced package into the store does, with
        // the same conflicts): no change to tell.
        guard record != old else { return }
        var withOldConflicts = record
        withOldConflicts.conflicts = old.conflicts
        if withOldConflicts == old { changes.noteRestamped(record) } else { changes.noteChanged(record) }
    }
}

extension IndexSnapshot {
    /// Marks `folder` to be listed again: a document known in it is gone, so its names changed
    /// (even if its stamp says it is as listed: a change this process took for its own, see
    /// ``DocumentIndex/noteChanges(at:since:)``).
    /// The folder's stamps need not be loaded (a process that only looked one entry up): the
    /// change is written either way.
    mutating func markUnlisted(_ folder: String, into changes: inout Changes) {
        accounted[folder] = nil
        changes.accountedChanged[folder] = .some(nil)
        folders[folder] = FileStamp.none
        changes.foldersChanged[folder] = FileStamp.none
    }

    /// Forgets that `folder`'s names were accounted for without a listing.
    mutating func forgetAccounted(_ folder: String, into changes: inout Changes) {
        guard accounted.removeValue(forKey: folder) != nil else { return }
        changes.accountedChanged[folder] = .some(nil)
    }
}

extension IndexSnapshot.Changes {
    /// The changes as a batch: a document removed at one path and added at another with the
    /// same identifier is a move.
    func batch(indexID: UUID, sequence: UInt64, kind: IndexBatch.Kind = .update) -> IndexBatch {
        // The lists are made when read: once each here.
        let removed = self.removed, addedRecords = self.added, changed = self.changed
        var removedByIdentifier: [String: [Int]] = [:]
        var removedAt: [String: Int] = [:]
        for (index, record) in removed.enumerated() {
            if let identifier = record.identifier.text { removedByIdentifier[identifier, default: []].append(index) }
            removedAt[record.relativePath] = index
        }
        // The latest record of each path; a path added and then changed is added as it is now.
        var latest: [String: EntryRecord] = [:]
        for record in addedRecords + changed { latest[record.relativePath] = record }
        let addedPaths = Set(addedRecords.map(\.relativePath))
        var movedFrom = Set<Int>()
        var moves: [IndexMove] = []
        var added: [IndexEntry] = []
        var changedPaths = Set(changed.map(\.relativePath)).subtracting(addedPaths)
        for path in addedPaths.sorted() {
            let record = latest[path]!
            // The same document gone and back at the same path (two looks at its folder in one
            // batch): a change.
            if let index = removedAt[path], !movedFrom.contains(index), removed[index].identifier == record.identifier {
                movedFrom.insert(index)
                changedPaths.insert(path)
                continue
            }
            if let identifier = record.identifier.text, var candidates = removedByIdentifier[identifier] {
                candidates.removeAll { movedFrom.contains($0) }
                guard !candidates.isEmpty else {
                    added.append(record.entry)
                    continue
                }
                let index = candidates.removeFirst()
                removedByIdentifier[identifier] = candidates
                movedFrom.insert(index)
                moves.append(IndexMove(from: removed[index].entry, to: record.entry))
            } else {
                added.append(record.entry)
            }
        }
        let removedEntries = removed.enumerated().filter { !movedFrom.contains($0.offset) }.map(\.element.entry)
        let changedEntries = changedPaths.sorted().compactMap { latest[$0]?.entry }
        return IndexBatch(
            indexID: indexID, sequence: sequence, kind: kind,
            added: added,
            removed: removedEntries.sorted { $0.relativePath < $1.relativePath },
            changed: changedEntries,
            moved: moves.sorted { $0.to.relativePath < $1.to.relativePath })
    }
}
