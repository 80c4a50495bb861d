import DocumentKitSystem

extension DocumentIndex {
    /// Tells the index this process changed these documents (saved, moved, removed): they are
    /// checked again now, so that the next process doesn't have to.
    ///
    /// With the `mark` taken just before the change (``markListing(forChangesAt:)``), the folders
    /// holding them stay accounted for: the next ``refreshListing()`` (in any process) needs no
    /// `readdir` of them, unless something other than this change added or removed a folder
    /// there meanwhile. ``refresh()`` lists them again.
    public func noteChanges(at relativePaths: [String], since mark: ListingMark? = nil) async {
        var changes = IndexSnapshot.Changes()
        for path in relativePaths {
            loadRecord(path)
            snapshot.revalidate(path, using: reader, into: &changes)
        }
        if let mark { keepListed(mark, paths: relativePaths, into: &changes) }
        if live != nil { updateWatches(packages: relativePaths) }
        _ = publish(changes)
        persist(changes, built: false)
    }

    /// Looks at the folders holding `relativePaths` before this process changes the documents
    /// there: give the mark to ``noteChanges(at:since:)`` afterwards. Costs a `stat` per folder
    /// and per path.
    public func markListing(forChangesAt relativePaths: [String]) -> ListingMark {
        loadFolderStamps()
        var mark = ListingMark()
        for path in relativePaths {
            mark.existed[path] = reader.packageStamp(path) != nil
            let folder = parentPath(of: path)
            guard mark.folders[folder] == nil, let status = reader.folderStatus(folder) else { continue }
            let stamp = FileStamp(status)
            let listed = snapshot.folders[folder] == stamp || snapshot.accounted[folder] == stamp
            mark.folders[folder] = .init(stamp: stamp, linkCount: status.linkCount, wasCurrent: listed)
        }
        return mark
    }

    /// Records the folders of `mark` as accounted for at their stamps now, when the index's
    /// listing of them was current before the change and their link counts (2 + their
    /// subfolders) changed by exactly the packages `paths` added and removed there: anything else
    /// (a copy or a removal by another process meanwhile) leaves the folder to be listed again.
    ///
    /// What this can miss, until the next ``refresh()`` or a miss that lists: another process
    /// removing one folder and adding another in the same folder while this change runs (the
    /// count is the same), or adding one to a folder whose link count is not a count (ext4 past
    /// 65,000 subfolders says 1). A document renamed there is found gone at its old name, which
    /// marks the folder to be listed again.
    func keepListed(_ mark: ListingMark, paths: [String], into changes: inout IndexSnapshot.Changes) {
        var delta: [String: Int] = [:]
        for path in paths {
            let now = reader.packageStamp(path) != nil
            let before = mark.existed[path] ?? false
            delta[parentPath(of: path), default: 0] += (now ? 1 : 0) - (before ? 1 : 0)
        }
        for (folder, old) in mark.folders where old.wasCurrent {
            guard let status = reader.folderStatus(folder) else { continue }
            let stamp = FileStamp(status)
            guard stamp.device == old.stamp.device, stamp.inode == old.stamp.inode else { continue }
            // A link count under 2 is not a count (ext4 past 65,000 subfolders): it can't tell.
            let counted = status.linkCount >= 2 && old.linkCount >= 2
            if counted && Int64(status.linkCount) - Int64(old.linkCount) != Int64(delta[folder] ?? 0) { continue }
            snapshot.accounted[folder] = stamp
            changes.accountedChanged[folder] = stamp
        }
    }

    /// Loads the folder stamps of the persisted index if this process has none yet.
    func loadFolderStamps() {
        guard snapshot.folders.isEmpty, let database else { return }
        do {
            guard try database.isBuilt() else { return }
            snapshot.folders = try database.folders()
            snapshot.accounted = try database.accounted()
        } catch {
            databaseFailed(error)
        }
    }
}
