#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import FormatVersioning
import Logging

extension VersionStore {
    /// The current version of the item and every version the store keeps of it.
    ///
    /// Never fails for a damaged store: what can't be read is in ``VersionListing/problems``. A
    /// package whose manifest can't be read is looked up by its name (see
    /// ``VersionListing/Identification/name``), and the listing's problems say so; a store
    /// whose `store.json` is damaged is rebuilt first, from its entries.
    /// - Throws: Only when the store is in a newer format than this code reads, or its
    ///   description can't be read or repaired.
    public func versions(ofItemAt itemURL: URL) throws(DocumentKitError) -> VersionListing {
        let trusting = Self.entriesNeverChange(inFormat: try checkOrRepairStoreFormat())
        let lookup = lookUpDocument(ofItemAt: itemURL)
        var others: [FileVersion] = []
        var problems: [DocumentKitError] = lookup.problem.map { [$0] } ?? []
        if let problem = lookup.problem { Self.logger.notice("Version store: \(problem.description)") }
        for key in lookup.keys {
            let (found, foundProblems) = storedVersions(of: key, itemURL: itemURL, trusting: trusting)
            others += found.filter { version in !others.contains { $0.persistentIdentifier == version.persistentIdentifier } }
            problems += foundProblems
        }
        others.sort(by: Self.newestFirst)
        return VersionListing(current: currentVersion(ofItemAt: itemURL), others: others, problems: problems, identification: lookup.identification)
    }

    /// The order of listings: newest first, then by identifier.
    static func newestFirst(_ a: FileVersion, _ b: FileVersion) -> Bool {
        (a.modificationDate ?? .distantPast, a.persistentIdentifier) > (b.modificationDate ?? .distantPast, b.persistentIdentifier)
    }

    /// The item as it is now, as a version; nil when there is no item.
    public func currentVersion(ofItemAt itemURL: URL) -> FileVersion? {
        var info = stat()
        guard lstat(itemURL.path, &info) == 0 else { return nil }
        let status = FileStatus(info)
        let token = Self.token(of: status)
        return FileVersion(
            persistentIdentifier: token, itemURL: itemURL, url: itemURL, isCurrent: true,
            localizedName: itemURL.lastPathComponent,
            modificationDate: Date(timeIntervalSince1970: Double(status.modificationTime) / 1e9),
            localizedNameOfSavingComputer: nil, savingUser: nil, origin: nil, adoptedFrom: nil, isConflict: false,
            resolved: true, isDiscardable: false, ancestorIdentifier: nil, resolution: nil)
    }

    /// The versions other than the current one, newest first.
    public func otherVersions(ofItemAt itemURL: URL) throws(DocumentKitError) -> [FileVersion] {
        try versions(ofItemAt: itemURL).others
    }

    /// The newest version the store keeps of the item (the first of ``otherVersions(ofItemAt:)``),
    /// reading only the entries of the newest second when one of them can be read: a document
    /// with thousands of versions is not listed whole to find it.
    public func newestVersion(ofItemAt itemURL: URL) throws(DocumentKitError) -> FileVersion? {
        try checkOrRepairStoreFormat()
        let lookup = lookUpDocument(ofItemAt: itemURL)
        var newest: [FileVersion] = []
        for key in lookup.keys {
            var (found, _) = storedVersions(of: key, itemURL: itemURL, reporting: false, newestSecondOnly: true)
            // Those of the newest second can't be read (damaged, still arriving): the next newest is among all.
            if found.isEmpty { found = storedVersions(of: key, itemURL: itemURL, reporting: false).0 }
            newest += found.prefix(1)
        }
        return newest.sorted(by: Self.newestFirst).first
    }

    /// The conflict versions not resolved yet, newest first.
    public func unresolvedConflictVersions(ofItemAt itemURL: URL) throws(DocumentKitError) -> [FileVersion] {
        try versions(ofItemAt: itemURL).unresolvedConflicts
    }

    /// The version with `identifier` (current or kept), or nil if it is gone.
    public func version(ofItemAt itemURL: URL, withPersistentIdentifier identifier: String) throws(DocumentKitError) -> FileVersion? {
        let listing = try versions(ofItemAt: itemURL)
        if let current = listing.current, current.persistentIdentifier == identifier { return current }
        return listing.others.first { $0.persistentIdentifier == identifier }
    }

    /// The identifier of the item's state on disk: device, inode, modification and change times.
    /// Every save, and every change by a sync engine (which renames into place), changes it.
    static func token(of status: FileStatus) -> String {
        "current-" + [status.device, status.inode, UInt64(bitPattern: status.modificationTime), UInt64(bitPattern: status.changeTime)]
            .map { String($0, radix: 16) }.joined(separator: "-")
    }

    /// Every readable version of `key`, newest first, and what could not be read.
    /// With `newestSecondOnly`, only the entries whose ids name the newest second are read (an id
    /// starts with its version's date, `YYYYMMDDTHHMMSSZ`, so the newest version is among them).
    ///
    /// A version's record is its newest state entry's (format 3). In a store whose entries
    /// never change once named, an entry this store found whole before, at the same name and
    /// inode number, is taken as it was: one `getdents` of the folder, nothing else per version.
    /// `trusting`: ``entriesNeverChange``, when the caller read the store's format just before.
    func storedVersions(
        of key: DocumentKey, itemURL: URL, reporting: Bool = true, newestSecondOnly: Bool = false, trusting: Bool? = nil
    ) -> ([FileVersion], [DocumentKitError]) {
        waitForPendingVersions(of: key)
        let folder = folder(for: key)
        guard var entries = folderEntries(at: folder) else { return ([], []) }
        if entries.hasNewEntries {
            completeInterruptedEntries(in: folder)
            entries = folderEntries(at: folder) ?? FolderEntries()
        }
        if !entries.exchangeEntries.isEmpty, settleExchangeEntriesIfIdle(in: folder, key: key) {
            entries = folderEntries(at: folder) ?? FolderEntries()
        }
        let trusting = trusting ?? entriesNeverChange
        var listed = entries.versions
        if newestSecondOnly {
            let newest = Set(VersionIdentifier.ofNewestSecond(among: listed.map(\.name)))
            listed = listed.filter { newest.contains($0.name) }
        }
        var versions: [FileVersion] = []
        var problems: [DocumentKitError] = []
        for name in newestSecondOnly ? [] : entries.others.sorted() {
            problems.append(DocumentKitError(
                .corruptData, operation: .read, path: folder.appendingPathComponent(name).path,
                detail: "This is not a version (a version's folder is named like 20261122T101500Z-0123456789abcdef); it is skipped."))
        }
        for (name, inode) in listed.sorted(by: { $0.name < $1.name }) {
            let entry = folder.appendingPathComponent(name, isDirectory: true)
            do throws(DocumentKitError) {
                let record = try readRecord(in: entry, inode: trusting ? inode : nil)
                guard record.id == name else {
                    throw DocumentKitError(.corruptData, operation: .read, path: entry.appendingPathComponent(VersionRecord.fileName).path,
                        detail: "The record names version \(record.id), not \(name).")
                }
                let item = entry.appendingPathComponent("item", isDirectory: record.kind == "package")
                if !trusting || !remembersRecord(in: entry, inode: inode) {
                    try checkEntry(entry, item: item, remembering: !trusting)
                    if trusting { rememberRecord(record, in: entry, inode: inode) }
                }
                let states = entries.states[name] ?? []
                let current = states.isEmpty ? record : try currentRecord(of: entry, inode: trusting ? inode : nil, states: states)
                // An unresolved conflict (rare) is checked whole at each listing, as a count does.
                if trusting, current.conflict, !current.resolved, !exists(item) {
                    throw DocumentKitError(.notFound, operation: .read, path: item.path, detail: "The version's contents are gone.")
                }
                versions.append(Self.version(from: current, itemURL: itemURL, contents: item))
            } catch {
                problems.append(error)
            }
        }
        // Callers get the problems; the log has them at notice level, for apps that don't look.
        for problem in problems where reporting {
            Self.logger.notice("Version store: \(problem.description)\(problem.description.contains("skipped") ? "" : " It is skipped.")")
        }
        versions.sort(by: Self.newestFirst)
        return (versions, problems)
    }

    /// That the entry's contents are there, and that no sync engine left copies of its record
    /// beside it (removed). An entry found so is remembered with its folder's identity: while no
    /// name in it is added or removed (its modification and change times stay), a listing looks
    /// at it with one `lstat`, not an `lstat` of its item and a listing of the folder.
    /// Not `remembering` (a store whose entries never change remembers the entry with its
    /// record instead, one slot of the cache per version rather than two).
    private func checkEntry(_ entry: URL, item: URL, remembering: Bool = true) throws(DocumentKitError) {
        let referenceTime = DigestClock.now()
        let status = try? fileSystem.status(of: entry.path, in: AT_FDCWD)
        let key = entry.path + "/"
        if let status, fileCache.value(at: key, identity: status.identity, as: CheckedEntry.self) != nil { return }
        guard (try? fileSystem.status(of: item.path, in: AT_FDCWD)) != nil else {
            throw DocumentKitError(.notFound, operation: .read, path: item.path, detail: "The version's contents are gone.")
        }
        if removeConflictCopiesOfRecord(in: entry) { return }
        if remembering, let status { fileCache.remember(CheckedEntry(), at: key, identity: status.identity, referenceTime: referenceTime) }
    }

    /// What ``checkEntry(_:item:)`` remembers of an entry it found whole.
    private struct CheckedEntry: Sendable {}

    /// Removes the conflict copies a sync engine made of a version's record (`record.sync-conflict-….json`):
    /// two machines that kept the same version (the same id: the same contents) wrote records
    /// that differ only in when and where; the one in place is as good.
    /// Returns whether it removed any.
    @discardableResult
    func removeConflictCopiesOfRecord(in entry: URL) -> Bool {
        guard let names = names(inFolderAt: entry.path), names.count > 2 else { return false }
        var removed = false
        for name in names where ConflictCopyName(parsing: name)?.originalName == VersionRecord.fileName {
            try? removeItem(entry.path + "/" + name, in: AT_FDCWD, using: fileSystem)
            removed = true
        }
        return removed
    }

    /// The record of the version entry `entry` (kept in the file cache unless not `remembering`).
    func readRecord(in entry: URL, remembering: Bool = true) throws(DocumentKitError) -> VersionRecord {
        let recordURL = entry.appendingPathComponent(VersionRecord.fileName)
        let missing = DocumentKitError(.corruptData, operation: .read, path: recordURL.path,
            detail: "The version's record is missing or unreadable (a version still arriving from a sync engine, or a damaged one).")
        // Read once per process while it is unchanged (see `readCachedStoreFile`).
        let record = try readCachedStoreFile(recordURL, limit: 8 << 20, remembering: remembering, failure: { _ in missing }) {
            data throws(DocumentKitError) in
            try VersionRecord.decode(data, path: recordURL.path)
        }
        guard let record else { throw missing }
        return record
    }

    static func version(from record: VersionRecord, itemURL: URL, contents: URL) -> FileVersion {
        FileVersion(
            persistentIdentifier: record.id, itemURL: itemURL, url: contents, isCurrent: false, localizedName: record.name,
            modificationDate: RecordDate.date(record.modified), localizedNameOfSavingComputer: record.host,
            savingUser: record.user, origin: record.origin, adoptedFrom: record.adoptedFrom?.engine,
            isConflict: record.conflict, resolved: record.resolved || !record.conflict, isDiscardable: record.discardable,
            ancestorIdentifier: record.ancestor, resolution: record.resolution?.how)
    }
}

extension VersionStore {
    /// The identifier the item's current version has now (see ``currentVersion(ofItemAt:)``),
    /// or nil when there is no item: what a save compares with the version it was based on.
    public static func currentIdentifier(ofItemAt itemURL: URL) -> String? {
        var info = stat()
        guard lstat(itemURL.path, &info) == 0 else { return nil }
        return token(of: FileStatus(info))
    }

    /// A digest naming the item's contents: its manifest's SHA-256 for a package with one (the
    /// manifest lists every member's), a file's own; nil for a package without a manifest. Two
    /// states with the same digest are the same version even if their identifiers differ.
    public func contentDigest(ofItemAt itemURL: URL) -> String? {
        contentDigest(of: itemURL, isPackage: isDirectory(itemURL))
    }

    /// Keeps the item's current contents as an unresolved conflict version, without
    /// coordinating: call it inside a coordinated write of the item, before saving over it.
    /// The ancestor is the stored version whose contents have `ancestorDigest`, if any.
    @discardableResult
    public func keepConflictingVersion(ofItemAt itemURL: URL, ancestorDigest: String?) throws(DocumentKitError) -> FileVersion {
        var ancestor: String?
        if let ancestorDigest {
            let suffix = "-" + ancestorDigest.prefix(16)
            ancestor = storedVersions(of: documentKey(forItemAt: itemURL), itemURL: itemURL).0
                .first { $0.persistentIdentifier.hasSuffix(suffix) }?.persistentIdentifier
        }
        var draft = VersionDraft(itemURL: itemURL, source: itemURL, origin: .conflict, isConflict: true, ancestor: ancestor)
        draft.host = .some(nil)  // another process wrote it: who, is not known
        draft.user = .some(nil)
        return try markedAsConflict(makeVersion(draft), ancestor: ancestor)
    }
}
