#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import FilePackages
import FormatVersioning
import Logging
import SystemPackage

extension VersionStore {
    /// The names in a document's folder of the store, sorted into kinds (one `getdents` with `d_ino`, or
    /// none: ``WatchedFolderNames``).
    struct FolderEntries {
        /// The version entries (`ID`), with their inode numbers.
        var versions: [(name: String, inode: UInt64)] = []
        /// The state entries of each version id, oldest first (the last is its state).
        var states: [String: [(name: String, inode: UInt64)]] = [:]
        /// Names that are neither, nor hidden: not versions (readers report them).
        var others: [String] = []
        /// The `.new-` entries: versions being built (or left complete by a killed process).
        var newEntries: [String] = []
        var hasNewEntries: Bool { !newEntries.isEmpty }
        /// The `.swap-` entries: versions kept by exchange, being built (or left by a process
        /// that died after its exchange).
        var exchangeEntries: [String] = []
    }

    /// The entries of the document folder `folder`; nil when it can't be listed.
    func folderEntries(at folder: URL) -> FolderEntries? {
        listedEntries(of: folder).map(folderEntries(from:))
    }

    /// The names `listed` (a document folder's, with their inode numbers) sorted into kinds.
    func folderEntries(from listed: [String: UInt64]) -> FolderEntries {
        var entries = FolderEntries()
        for (name, inode) in listed {
            if name.hasPrefix(".") {
                if name.hasPrefix(".new-") {
                    entries.newEntries.append(name)
                } else if name.hasPrefix(Self.exchangePrefix) {
                    entries.exchangeEntries.append(name)
                }
            } else if VersionIdentifier.isValid(name) {
                entries.versions.append((name, inode))
            } else if let (id, _) = StateEntryName.parse(name) {
                entries.states[id, default: []].append((name, inode))
            } else {
                entries.others.append(name)
            }
        }
        for id in entries.states.keys { entries.states[id]!.sort { $0.name < $1.name } }
        return entries
    }

    /// The names in the folder `folder` with their inode numbers: as ``WatchedFolderNames`` keeps
    /// them (no listing), else listed. Nil when the folder can't be listed.
    func listedEntries(of folder: URL) -> [String: UInt64]? {
        if let watched = WatchedFolderNames.shared.entries(ofFolderAt: folder.path, using: fileSystem) { return watched }
        return unwatchedEntries(of: folder)
    }

    /// The names in the folder `folder` with their inode numbers, listed (one `getdents`). Nil when
    /// the folder can't be listed.
    func unwatchedEntries(of folder: URL) -> [String: UInt64]? {
        guard let descriptor = try? openFolder(folder, "listing versions"),
            let listed = try? fileSystem.inodesOfDirectory(descriptor.rawValue, name: folder.path)
        else { return nil }
        var entries = [String: UInt64](minimumCapacity: listed.count)
        for (name, inode) in listed { entries[name] = inode }
        return entries
    }

    /// Whether this store's entries never change once named (format 3 and later): an entry known
    /// by its name and inode number is then known whole, without a `stat` of its files. A store
    /// of an older format may have a record rewritten in place by code of that format.
    var entriesNeverChange: Bool { Self.entriesNeverChange(inFormat: (try? checkStoreFormat()) ?? nil) }

    /// ``entriesNeverChange`` of a store whose `store.json` says `format` (nil: none).
    static func entriesNeverChange(inFormat format: Int?) -> Bool { (format ?? 0) >= 3 }

    /// The record of the version entry `entry` as it is now: that of its newest state entry
    /// that can be read (format 3), else its own. `states`: the version's state entries, oldest
    /// first (nil: listed here). `inode`s make the reads cacheable (see ``readRecord(in:inode:)``).
    func currentRecord(
        of entry: URL, inode: UInt64? = nil, states: [(name: String, inode: UInt64)]? = nil
    ) throws(DocumentKitError) -> VersionRecord {
        try currentRecordTellingNewest(of: entry, inode: inode, states: states).record
    }

    /// ``currentRecord(of:inode:states:)``, and whether it is the newest state's (false: that
    /// one can't be read yet, or there is none and the entry's own was read).
    func currentRecordTellingNewest(
        of entry: URL, inode: UInt64? = nil, states: [(name: String, inode: UInt64)]? = nil
    ) throws(DocumentKitError) -> (record: VersionRecord, isNewest: Bool) {
        let id = entry.lastPathComponent
        let folder = entry.deletingLastPathComponent()
        let states = states ?? stateEntries(of: id, in: folder)
        for (offset, state) in states.reversed().enumerated() {
            let stateEntry = folder.appendingPathComponent(state.name, isDirectory: true)
            guard let record = try? readRecord(in: stateEntry, inode: inode == nil ? nil : state.inode), record.id == id else {
                Self.logger.notice("Version store: the state entry \(stateEntry.path) can't be read or names another version; an older state is used.")
                continue
            }
            // A state entry is whole once named (its record is all it holds).
            if inode != nil { rememberRecord(record, in: stateEntry, inode: state.inode) }
            return (record, offset == 0)
        }
        return (try readRecord(in: entry, inode: inode), states.isEmpty)
    }

    /// The state entries of version `id` in `folder`, oldest first.
    func stateEntries(of id: String, in folder: URL) -> [(name: String, inode: UInt64)] {
        folderEntries(at: folder)?.states[id] ?? []
    }

    /// The record of the entry `entry` whose folder has inode number `inode` in a store whose
    /// entries never change: read once per process while that inode is at that name. Without
    /// an inode, as ``readRecord(in:remembering:)``.
    func readRecord(in entry: URL, inode: UInt64?) throws(DocumentKitError) -> VersionRecord {
        guard let inode else { return try readRecord(in: entry) }
        let key = entry.path + "/#"
        let identity = entryIdentity(inode)
        if let known = fileCache.value(at: key, identity: identity, as: VersionRecord.self) { return known }
        return try readRecord(in: entry, remembering: false)
    }

    /// Remembers `record` as the record of the entry `entry` (inode number `inode`), once the
    /// entry was found whole (see ``readRecord(in:inode:)``).
    func rememberRecord(_ record: VersionRecord, in entry: URL, inode: UInt64) {
        fileCache.remember(record, at: entry.path + "/#", identity: entryIdentity(inode), referenceTime: DigestClock.now())
    }

    /// Forgets what was remembered of `entry` (it is being removed: a version added again under
    /// its id may get the same inode number).
    func forgetRecord(in entry: URL) {
        fileCache.forget(at: entry.path + "/#")
    }

    /// How old an orphaned state entry (its version not there) must be, by the time in its
    /// name, before a cleanup removes it: a sync engine may deliver a state before its version.
    static let orphanedStateAge: TimeInterval = 24 * 3600

    /// Removes the state entries in `folder` whose version is not there and that were written more
    /// than ``orphanedStateAge`` ago (by their names): what a removal that died after removing its
    /// version left. Called under the folder's exclusive lock, with its `names`.
    func removeOrphanedStates(in folder: URL, names: [String]) {
        let versions = Set(names.filter(VersionIdentifier.isValid))
        let limit = VersionIdentifier.timestamp(Date().addingTimeInterval(-Self.orphanedStateAge)).dropLast()
        for name in names {
            guard let (id, suffix) = StateEntryName.parse(name), !versions.contains(id), suffix.prefix(15) < limit else { continue }
            let aside = temporaryEntryURL(in: folder, purpose: "removing")
            guard (try? fileSystem.rename(folder.path + "/" + name, in: AT_FDCWD, to: aside.path, in: AT_FDCWD)) != nil else { continue }
            _ = try? removeItem(aside.path, in: AT_FDCWD, using: fileSystem)
        }
    }

    /// Whether the record of `entry` (inode number `inode`) is remembered: the entry was found whole.
    func remembersRecord(in entry: URL, inode: UInt64) -> Bool {
        fileCache.value(at: entry.path + "/#", identity: entryIdentity(inode), as: VersionRecord.self) != nil
    }

    /// What stands for an entry known by its inode number in the file cache during this span of
    /// ``trustHorizon`` (no file has a negative size, so it never equals a real file's identity).
    func entryIdentity(_ inode: UInt64) -> FileIdentity {
        FileIdentity(device: .max, inode: inode, size: -2, modificationTime: trustSpan(), changeTime: 0)
    }

    /// The span of ``trustHorizon`` the clock is in; with a zero horizon, the clock itself
    /// (never the same twice, and never older than a reading: nothing is remembered).
    func trustSpan() -> Int64 {
        let now = DigestClock.now()
        let horizon = trustHorizon.components.seconds * 1_000_000_000 + trustHorizon.components.attoseconds / 1_000_000_000
        return horizon > 0 ? now / horizon : now
    }

    /// Records a new state of the version entry `entry` (format 3: an entry never changes once
    /// named): a state entry `ID.state-…` holding `record`, built hidden and renamed into place.
    func writeState(_ record: VersionRecord, of entry: URL) throws(DocumentKitError) {
        try prepareStore()
        let documentFolder = entry.deletingLastPathComponent()
        let (_, hold) = try prepareFolder(for: DocumentKey(folderName: documentFolder.lastPathComponent, identifier: nil))
        defer { withExtendedLifetime(hold) {} }
        let temporary = try createEntry(in: documentFolder)
        var placed = false
        defer { if !placed { _ = try? removeItem(temporary.path, in: AT_FDCWD, using: fileSystem) } }
        try writeRecord(record, inNewEntry: temporary)
        // Named after the newest state there (a clock set back, or the same millisecond, must not
        // put the new state before it).
        let newest = stateEntries(of: record.id, in: documentFolder).last.flatMap { StateEntryName.date(of: $0.name) }
        var attempt = 0
        while !placed {
            let date = max(Date(), newest.map { $0.addingTimeInterval(0.001) } ?? .distantPast)
            let final = documentFolder.appendingPathComponent(StateEntryName.make(for: record.id, date: date), isDirectory: true)
            do throws(Errno) {
                try fileSystem.rename(temporary.path, in: AT_FDCWD, to: final.path, in: AT_FDCWD)
                placed = true
            } catch {
                attempt += 1
                guard (error == .fileExists || error == .directoryNotEmpty), attempt < 3 else {
                    throw DocumentKitError(error, operation: .save, path: final.path, step: "putting the version's new state in place")
                }
            }
        }
        try synchronize(documentFolder, "flushing the folder that names the version's new state")
    }

    /// Removes the state entries of the version entry `entry` (after the entry itself: the
    /// version vanishes in the state it had, never in an earlier one).
    func removeStates(of entry: URL) throws(DocumentKitError) {
        let folder = entry.deletingLastPathComponent()
        for state in stateEntries(of: entry.lastPathComponent, in: folder) {
            forgetRecord(in: folder.appendingPathComponent(state.name, isDirectory: true))
            let aside = temporaryEntryURL(in: folder, purpose: "removing")
            do { try fileSystem.rename(folder.path + "/" + state.name, in: AT_FDCWD, to: aside.path, in: AT_FDCWD) } catch {
                if error == .noSuchFileOrDirectory { continue }
                throw DocumentKitError(error, operation: .remove, path: folder.path + "/" + state.name, step: "removing the version's state")
            }
            _ = try? removeItem(aside.path, in: AT_FDCWD, using: fileSystem)
        }
    }
}
