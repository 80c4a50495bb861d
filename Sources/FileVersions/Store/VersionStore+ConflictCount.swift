#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Foundation
import FormatVersioning
import Synchronization

extension VersionStore {
    /// How many unresolved conflict versions the store keeps of the item: the number of
    /// ``unresolvedConflictVersions(ofItemAt:)``, found without making them.
    ///
    /// What a document's open and a library index need on every change. It costs one listing
    /// of the document's folder in the store: a version this store classified before, at the
    /// same name and inode number with the same newest state, is not looked at again (a store of
    /// format 2, whose records may be rewritten in place, costs one `fstatat` per version). Where
    /// the file system gives a folder a new change time at every change (Linux 6.13 and later),
    /// a folder unchanged since the last count in this process is not even listed.
    /// Versions that can't be read are not counted, as the listing skips them.
    /// - Throws: As ``versions(ofItemAt:)``: only for a store in a newer format, or one whose
    ///   description can't be read or repaired.
    public func unresolvedConflictCount(ofItemAt itemURL: URL) throws(DocumentKitError) -> Int {
        let trusting = Self.entriesNeverChange(inFormat: try checkOrRepairStoreFormat())
        var found = Set<VersionIdentifier.Packed>()
        for key in lookUpDocument(ofItemAt: itemURL).keys {
            found.formUnion(unresolvedConflicts(of: key, trusting: trusting))
        }
        return found.count
    }

    /// ``unresolvedConflictCount(ofItemAt:)`` of a package whose manifest the caller has just
    /// read and found to name the document `identifier` (a manifest's is never empty): its folder in the store,
    /// without reading the manifest again (a library index counts at every change).
    package func unresolvedConflictCount(ofDocumentIdentifier identifier: String) throws(DocumentKitError) -> Int {
        let trusting = Self.entriesNeverChange(inFormat: try checkOrRepairStoreFormat())
        return Set(unresolvedConflicts(of: Self.key(forIdentifier: identifier), trusting: trusting)).count
    }

    /// The unresolved conflict versions in the folder of `key`, by id; what the count found is
    /// remembered in ``conflictTally`` for the next count. On a file system with exact change
    /// times (``ExactChangeTimes``), a store whose entries never change skips the listing while
    /// the folder's `stat` is the one taken before the last listing, in the same span of the
    /// trust horizon, and every version was whole then (a version being built, `.new-…`, is none:
    /// the listing is taken again once one of them has its record). Where ``WatchedFolderNames``
    /// keeps the folder's names, a count in the same span looks only at the names changed since
    /// the last one (``countChanges(_:in:of:span:)``), whatever the number of versions.
    private func unresolvedConflicts(of key: DocumentKey, trusting: Bool) -> [VersionIdentifier.Packed] {
        let folderURL = folder(for: key)
        let span = trustSpan()
        var before: ConflictTally.Listing?
        if trusting, let status = try? fileSystem.status(of: folderURL.path, in: AT_FDCWD),
            exactChangeTimes.inStore(at: url, using: fileSystem)
        {
            if let known = ConflictTally.listing(ofFolderAt: folderURL.path), known.describes(status, span: span),
                !known.building.contains(where: { isWhole(newEntry: $0, in: folderURL) })
            {
                return known.unresolved.filter { hasContents(of: $0, in: folderURL) }.compactMap(VersionIdentifier.Packed.init)
            }
            before = ConflictTally.Listing(identity: FileIdentity(status), linkCount: status.linkCount, span: span, unresolved: [])
        }
        return conflictTally.counting(named: key.folderName).counted.withLock { counted in
            countConflicts(in: folderURL, span: span, trusting: trusting, before: before, counted: &counted)
        }
    }

    /// ``unresolvedConflicts(of:trusting:)`` past its look at the folder's `stat` (`before`, on
    /// a file system with exact change times), with what the last count of the folder left in
    /// `counted` (brought up to date here).
    private func countConflicts(
        in folderURL: URL, span: Int64, trusting: Bool, before: ConflictTally.Listing?, counted: inout ConflictTally.Counted
    ) -> [VersionIdentifier.Packed] {
        var before = before
        var listed: [String: UInt64]?
        var cursor: WatchedFolderNames.Cursor?
        if trusting {
            let asked = counted.span == span ? counted.cursor : nil
            let answer = WatchedFolderNames.shared.answer(ofFolderAt: folderURL.path, using: fileSystem, since: asked)
            cursor = answer?.cursor
            // A change moves the folder's change time a moment before its inotify event is queued:
            // names answered from the events go with a `stat` only once that stat is settled.
            if answer != nil, let listing = before, !Self.isSettled(listing) { before = nil }
            switch answer?.names {
            case .changed(let changed)?:
                if let cursor, countChanges(changed, in: &counted, of: folderURL, span: span) {
                    counted.cursor = cursor
                    before?.unresolved = counted.unresolved.sorted()
                    ConflictTally.remember(counted.unsettled.isEmpty ? before : nil, ofFolderAt: folderURL.path)
                    return counted.unresolved.filter { hasContents(of: $0, in: folderURL) }.compactMap(VersionIdentifier.Packed.init)
                }
                // A version being built (or left by a killed process): counted over every version.
                cursor = nil
            case .all(let names)?: listed = names
            // Not watched (yet): listed here; asking again would count as the second ask that watches it.
            case nil:
                guard let names = unwatchedEntries(of: folderURL) else { return [] }
                listed = names
            }
        }
        guard var entries = listed.map(folderEntries(from:)) ?? folderEntries(at: folderURL) else { return [] }
        if entries.hasNewEntries {
            cursor = nil
            completeInterruptedEntries(in: folderURL, names: listed.map { Array($0.keys) })
            // A version another save is building (in a server, the next request's) is no
            // version yet, and its rename into place will change the folder: unless a whole one
            // was completed just now (the folder changed), the listing stands and is remembered.
            let unchanged = before.map { known in
                (try? fileSystem.status(of: folderURL.path, in: AT_FDCWD)).map { known.describes($0, span: span) } ?? false
            } ?? false
            if !unchanged {
                before = nil
                entries = folderEntries(at: folderURL) ?? FolderEntries()
            }
        }
        // Entries that never change once named (format 3) are known by name and inode number;
        // in an older store, a record may be rewritten in place: each is checked by a `stat`.
        let folder = trusting ? nil : try? openFolder(folderURL, "counting conflicts")
        guard trusting || folder != nil else { return [] }
        conflictTally.passes.add(1, ordering: .relaxed)
        let known = counted.entries
        var next = ConflictTally.Counted(cursor: cursor, span: span, states: entries.states)
        next.entries.reserveCapacity(entries.versions.count)
        for (name, inode) in entries.versions {
            guard let id = VersionIdentifier.Packed(name) else { continue }
            let found: (entry: ConflictTally.Entry, isTrusted: Bool)?
            if let folder {
                found = classifyEntry(name, in: folder.rawValue, of: folderURL, known: known[id])
            } else {
                // Most folders hold no state entry: no lookup by name then.
                let states = entries.states.isEmpty ? [] : entries.states[name] ?? []
                found = classifyUnchangingEntry(name, inode: inode, states: states, of: folderURL, span: span, known: known[id])
            }
            next.settle(name, id: id, inode: inode, as: found)
        }
        if !trusting { next.cursor = nil }
        counted = next
        // A version not whole yet (a sync engine delivering it) must be looked at again; so must
        // one whose newest state could not be read yet.
        before?.unresolved = next.unresolved.sorted()
        before?.building = entries.newEntries
        ConflictTally.remember(next.unsettled.isEmpty ? before : nil, ofFolderAt: folderURL.path)
        // An unresolved conflict (rare) is checked whole at each count, as the listing does.
        return next.unresolved.filter { hasContents(of: $0, in: folderURL) }.compactMap(VersionIdentifier.Packed.init)
    }

    /// How long ago a folder must have changed for its `stat` to vouch for names answered from
    /// inotify events: 10 ms (a change's event is queued a moment after its change time is set).
    static let settledMargin: Int64 = 10_000_000

    /// Whether the folder's change time in `listing` is at least ``settledMargin`` old.
    private static func isSettled(_ listing: ConflictTally.Listing) -> Bool {
        guard let changed = listing.identity.changeTime else { return false }
        return changed < DigestClock.now() - settledMargin
    }

    /// Brings `counted` (a count of the folder `folderURL` of a store whose entries never change,
    /// in the span `span`) up to date by the names changed since it was taken, each with its inode
    /// number now or nil where it is gone: the versions among them, and those whose state entries
    /// are among them, are looked at again, as is every version not settled. False when a
    /// version is being built (`.new-…`): the count then passes over every version, as it
    /// completes the entries a killed process left.
    private func countChanges(
        _ changed: [String: UInt64?], in counted: inout ConflictTally.Counted, of folderURL: URL, span: Int64
    ) -> Bool {
        var looked = counted.unsettled
        var statesChanged: Set<String> = []
        for (name, inode) in changed {
            if StateEntryName.mayBe(name), let (id, _) = StateEntryName.parse(name) {
                var states = counted.states[id] ?? []
                states.removeAll { $0.name == name }
                if let inode { states.append((name, inode)) }
                states.sort { $0.name < $1.name }
                counted.states[id] = states.isEmpty ? nil : states
                statesChanged.insert(id)
            } else if name.hasPrefix(".new-"), inode != nil {
                return false
            } else if let id = VersionIdentifier.Packed(name) {
                if let inode {
                    looked[name] = inode
                } else {
                    looked[name] = nil
                    counted.entries[id] = nil
                    counted.unsettled[name] = nil
                    counted.unresolved.remove(name)
                }
            }
        }
        // A version whose states changed is looked at again where it is now (a state may come
        // before its version from a sync engine, or stay after it was removed).
        for id in statesChanged where changed[id] == nil && looked[id] == nil {
            if let status = try? fileSystem.status(of: folderURL.path + "/" + id, in: AT_FDCWD), status.kind == .directory {
                looked[id] = status.inode
            }
        }
        for (name, inode) in looked {
            guard let id = VersionIdentifier.Packed(name) else { continue }
            let states = counted.states.isEmpty ? [] : counted.states[name] ?? []
            let found = classifyUnchangingEntry(name, inode: inode, states: states, of: folderURL, span: span, known: counted.entries[id])
            counted.settle(name, id: id, inode: inode, as: found)
        }
        return true
    }

    /// Whether the version being built `name` in `folderURL` has its record (written last): a
    /// killed process's, for the next listing to complete.
    /// As ``completeInterruptedEntries(in:names:)`` tells it: a readable record and the contents.
    private func isWhole(newEntry name: String, in folderURL: URL) -> Bool {
        let entry = folderURL.appendingPathComponent(name, isDirectory: true)
        guard (try? fileSystem.status(of: entry.path + "/" + VersionRecord.fileName, in: AT_FDCWD)) != nil else { return false }
        return (try? readRecord(in: entry)) != nil && (try? fileSystem.status(of: entry.path + "/item", in: AT_FDCWD)) != nil
    }

    /// Whether the version `id` in `folderURL` has its contents (`item`).
    private func hasContents(of id: String, in folderURL: URL) -> Bool {
        (try? fileSystem.status(of: folderURL.path + "/" + id + "/item", in: AT_FDCWD)) != nil
    }

    /// Whether the version `name` (its entry's inode number `inode`, its state entries
    /// `states`; `span`: the count's span of the trust horizon) of a store whose entries never
    /// change is an unresolved conflict: from `known`
    /// when the entry and its newest state are the ones remembered there in this span, or, in a
    /// later span, when the entry has no state entry and its folder and record `stat` as when it
    /// was read (``entryFilesIdentity(of:inode:referenceTime:)``: a record damaged in place, or a
    /// name made or removed in the entry, changes one of them); else read (the version's record
    /// and contents must be there; the newest readable state decides). Nil when the version is
    /// not whole (still arriving from a sync engine, or damaged).
    private func classifyUnchangingEntry(
        _ name: String, inode: UInt64, states: [(name: String, inode: UInt64)], of folderURL: URL, span: Int64,
        known: ConflictTally.Entry?
    ) -> (entry: ConflictTally.Entry, isTrusted: Bool)? {
        var hasher = Hasher()
        hasher.combine(inode)
        hasher.combine(span)
        hasher.combine(states.last?.name)
        hasher.combine(states.last?.inode)
        let hash = hasher.finalize()
        if let known, known.hasRecordIdentity(hash) { return (known, true) }
        let entry = folderURL.appendingPathComponent(name, isDirectory: true)
        // Taken before the reading: a change after it changes what the next span's `stat`s find.
        let referenceTime = DigestClock.now()
        let files = states.isEmpty ? entryFilesIdentity(of: entry, inode: inode, referenceTime: referenceTime) : nil
        if let known, let files, known.filesIdentity != 0, known.filesIdentity == files { return (known.renewed(as: hash), true) }
        guard let own = try? readRecord(in: entry, inode: inode), own.id == name, hasContents(of: name, in: folderURL),
            let current = states.isEmpty ? (record: own, isNewest: true) : try? currentRecordTellingNewest(of: entry, inode: inode, states: states)
        else { return nil }
        // A newest state not readable yet (a sync engine makes the folder, then puts the record in
        // it: no name in the document's folder changes then) is looked at again at the next count.
        let record = current.record
        let found = ConflictTally.Entry(recordIdentity: hash, isUnresolvedConflict: record.conflict && !record.resolved, filesIdentity: files ?? 0)
        return (found, current.isNewest)
    }

    /// A hash of the `stat`s of the version entry `entry` (inode number `inode`) and of its
    /// record, for a later span of the trust horizon to vouch for what a reading found: nil when
    /// they can't be taken, when the entry is not the inode listed, when the horizon is zero
    /// (nothing is remembered), or when either changed too lately to tell a later change by its
    /// times (the racy-timestamp rule of ``/FormatVersioning/CachedMemberDigest/isTrusted``).
    private func entryFilesIdentity(of entry: URL, inode: UInt64, referenceTime: Int64) -> Int? {
        guard trustHorizon > .zero,
            let folder = try? fileSystem.status(of: entry.path, in: AT_FDCWD), folder.kind == .directory, folder.inode == inode,
            let record = try? fileSystem.status(of: entry.path + "/" + VersionRecord.fileName, in: AT_FDCWD), record.kind == .regular
        else { return nil }
        let (folderIdentity, recordIdentity) = (FileIdentity(folder), FileIdentity(record))
        for identity in [folderIdentity, recordIdentity] where !CachedMemberDigest(identity: identity, sha256: "", referenceTime: referenceTime).isTrusted {
            return nil
        }
        var hasher = Hasher()
        hasher.combine(folderIdentity)
        hasher.combine(recordIdentity)
        // 0 stands for none.
        return hasher.finalize() | 1
    }

    /// Whether the entry `name`'s record is an unresolved conflict: from `known` when the record's
    /// identity is the one remembered there, else read. Nil when the record can't be read or
    /// names another version. `isTrusted`: the record is older than this reading (it may be remembered).
    private func classifyEntry(
        _ name: String, in folder: CInt, of folderURL: URL, known: ConflictTally.Entry?
    ) -> (entry: ConflictTally.Entry, isTrusted: Bool)? {
        let referenceTime = DigestClock.now()
        guard let status = try? fileSystem.status(of: name + "/" + VersionRecord.fileName, in: folder), status.kind == .regular else {
            return nil
        }
        let identity = FileIdentity(status)
        let hash = ConflictTally.hash(of: identity)
        if let known, known.hasRecordIdentity(hash) { return (known, true) }
        // A record a listing decoded comes from the file cache; one read here is not kept there
        // (the tally keeps what a count needs: a process that only counts holds no records).
        guard let record = try? readRecord(in: folderURL.appendingPathComponent(name, isDirectory: true), remembering: false),
            record.id == name
        else { return nil }
        let entry = ConflictTally.Entry(recordIdentity: hash, isUnresolvedConflict: record.conflict && !record.resolved)
        return (entry, CachedMemberDigest(identity: identity, sha256: "", referenceTime: referenceTime).isTrusted)
    }
}
