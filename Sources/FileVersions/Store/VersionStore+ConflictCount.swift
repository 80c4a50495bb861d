#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Foundation
import FormatVersioning

extension VersionStore {
    /// How many unresolved conflict versions the store keeps of the item: the number of
    /// ``unresolvedConflictVersions(ofItemAt:)``, found without making them.
    ///
    /// What a document's open and a library index need on every change. It costs one listing
    /// of the document's folder in the store and one `fstatat` per version: a record this
    /// store read before and that is unchanged is not read again.
    /// Versions that can't be read are not counted, as the listing skips them.
    /// - Throws: As ``versions(ofItemAt:)``: only for a store in a newer format, or one whose
    ///   description can't be read or repaired.
    public func unresolvedConflictCount(ofItemAt itemURL: URL) throws(DocumentKitError) -> Int {
        try checkOrRepairStoreFormat()
        var found = Set<VersionIdentifier.Packed>()
        for key in lookUpDocument(ofItemAt: itemURL).keys {
            found.formUnion(unresolvedConflicts(of: key))
        }
        return found.count
    }

    /// The unresolved conflict versions in the folder of `key`, by id; the folder's entries are
    /// remembered in ``conflictTally`` for the next count.
    private func unresolvedConflicts(of key: DocumentKey) -> [VersionIdentifier.Packed] {
        let folderURL = folder(for: key)
        let folderPath = folderURL.path
        guard let fd = try? fileSystem.open(folderPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) else { return [] }
        let folder = Descriptor(owning: fd)
        guard var names = try? fileSystem.contentsOfDirectory(folder.rawValue, name: folderPath) else { return [] }
        if names.contains(where: { $0.hasPrefix(".new-") }) {
            completeInterruptedEntries(in: folderURL)
            names = (try? fileSystem.contentsOfDirectory(folder.rawValue, name: folderPath)) ?? names
        }
        let known = conflictTally.folder(named: key.folderName)
        var entries = ConflictTally.Folder(minimumCapacity: names.count)
        var unresolved: [VersionIdentifier.Packed] = []
        for name in names {
            // Hidden entries and names that are not versions are not versions (the listing reports the latter).
            guard let id = VersionIdentifier.Packed(name),
                let found = classifyEntry(name, in: folder.rawValue, of: folderURL, known: known[id])
            else { continue }
            if found.isTrusted { entries[id] = found.entry }
            if found.entry.isUnresolvedConflict, (try? fileSystem.status(of: name + "/item", in: folder.rawValue)) != nil {
                unresolved.append(id)
            }
        }
        conflictTally.remember(entries, named: key.folderName)
        return unresolved
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
