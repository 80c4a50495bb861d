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
    ///   - origin: How the version came to be.
    ///   - isConflict: Whether it is an unresolved conflict version (kept until resolved).
    ///   - ancestorIdentifier: The version it and the current one descend from, when known.
    /// - Throws: ``DocumentKitError`` naming the item or the store; nothing is added then.
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
    /// - Parameter byMoving: Moves `sourceURL` into the store (it must be on the same file
    ///   system) instead of copying it.
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
        let documentFolder = try prepareFolder(for: key)
        let (record, existing) = try newRecord(for: draft, key: key, in: documentFolder)
        if let existing {
            if draft.moving { try? FileManager.default.removeItem(at: draft.source) }
            return existing
        }
        let id = record.id
        let isPackage = record.kind == "package"
        let temporary = try createEntry(in: documentFolder)
        var placed = false
        defer { if !placed { try? FileManager.default.removeItem(at: temporary) } }
        let contents = temporary.appendingPathComponent("item", isDirectory: isPackage)
        if draft.moving {
            guard rename(draft.source.path, contents.path) == 0 else {
                throw DocumentKitError(Errno(rawValue: errno), operation: .save, path: draft.source.path, step: "moving the contents into the version store")
            }
        } else {
            let tree: FileWrapper
            if let given = draft.tree { tree = given } else { tree = try FileWrapper(contentsOf: draft.source) }
            try tree.write(to: contents, options: SaveOptions(durability: durability))
        }
        try writeRecord(record, in: temporary)
        let final = documentFolder.appendingPathComponent(id, isDirectory: true)
        guard rename(temporary.path, final.path) == 0 else {
            let error = Errno(rawValue: errno)
            if let existing = existingVersion(id, in: documentFolder, itemURL: draft.itemURL) { return existing }
            throw DocumentKitError(error, operation: .save, path: final.path, step: "putting the new version in place")
        }
        placed = true
        synchronize(documentFolder)
        let version = Self.version(from: record, itemURL: draft.itemURL, contents: final.appendingPathComponent("item", isDirectory: isPackage))
        if !draft.isConflict { prune(key: key, itemURL: draft.itemURL) }
        return version
    }

    /// The folder of `key`'s versions, created if missing, with abandoned entries cleared.
    func prepareFolder(for key: DocumentKey) throws(DocumentKitError) -> URL {
        let documentFolder = folder(for: key)
        do { try FileManager.default.createDirectory(at: documentFolder, withIntermediateDirectories: true) } catch {
            throw DocumentKitError(.ioError, operation: .save, path: documentFolder.path, detail: "Can't create the document's folder in the version store: \(error.localizedDescription)")
        }
        removeAbandonedEntries(in: documentFolder)
        return documentFolder
    }

    /// A new hidden entry (`.new-RANDOM`) in `documentFolder`, for a version being built.
    func createEntry(in documentFolder: URL) throws(DocumentKitError) -> URL {
        let temporary = temporaryEntryURL(in: documentFolder, purpose: "new")
        do { try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false) } catch {
            throw DocumentKitError(.ioError, operation: .save, path: temporary.path, detail: "Can't create a version: \(error.localizedDescription)")
        }
        return temporary
    }

    /// The record of a new version made from `draft.source`: its kind, modification time and
    /// content digest name it (see `VersionIdentifier`); or the version, when the store has it already.
    func newRecord(for draft: VersionDraft, key: DocumentKey, in documentFolder: URL) throws(DocumentKitError)
        -> (record: VersionRecord, existing: FileVersion?)
    {
        var info = stat()
        guard lstat(draft.source.path, &info) == 0 else {
            throw DocumentKitError(Errno(rawValue: errno), operation: .read, path: draft.source.path, step: "reading the item to keep as a version")
        }
        let status = FileStatus(info)
        let isPackage = draft.tree?.isDirectory ?? (status.kind == .directory)
        let modified = draft.modified ?? Date(timeIntervalSince1970: Double(status.modificationTime) / 1e9)
        var id = VersionIdentifier.make(date: modified, digest: draft.digest ?? contentDigest(of: draft.source, isPackage: isPackage))
        let record = { (id: String) in
            VersionRecord(
                id: id, documentIdentifier: key.identifier, kind: isPackage ? "package" : "file",
                name: draft.itemURL.lastPathComponent, origin: draft.origin, modified: RecordDate.string(modified),
                host: draft.host ?? self.savingComputerName, user: draft.user ?? self.savingUser, conflict: draft.isConflict,
                resolved: false, discardable: false, ancestor: draft.ancestor, adoptedFrom: draft.adoptedFrom, resolution: nil)
        }
        if let existing = existingVersion(id, in: documentFolder, itemURL: draft.itemURL) { return (record(id), existing) }
        if FileManager.default.fileExists(atPath: documentFolder.appendingPathComponent(id).path) {
            id = VersionIdentifier.make(date: modified, digest: nil)  // a damaged entry holds the name
        }
        return (record(id), nil)
    }

    /// The version `id` if it is in `folder`, whole.
    func existingVersion(_ id: String, in folder: URL, itemURL: URL) -> FileVersion? {
        let entry = folder.appendingPathComponent(id, isDirectory: true)
        guard let record = try? readRecord(in: entry), record.id == id else { return nil }
        let contents = entry.appendingPathComponent("item", isDirectory: record.kind == "package")
        guard FileManager.default.fileExists(atPath: contents.path) else { return nil }
        return Self.version(from: record, itemURL: itemURL, contents: contents)
    }

    /// Writes `record.json` in `entry` atomically (replacing one that is there).
    func writeRecord(_ record: VersionRecord, in entry: URL) throws(DocumentKitError) {
        try FileWrapper(regularFileWithContents: record.encoded())
            .write(to: entry.appendingPathComponent(VersionRecord.fileName), options: SaveOptions(durability: durability))
    }

    /// A digest of the contents that names them across machines: the manifest's bytes for a
    /// package with one (it lists every member's SHA-256), the bytes of a file; nil otherwise.
    /// A manifest that records no members says nothing of the contents: nil then too.
    func contentDigest(of url: URL, isPackage: Bool) -> String? {
        let file = isPackage ? url.appendingPathComponent(manifestName) : url
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        if isPackage {
            guard let manifest = try? DocumentManifest(jsonData: data, path: file.path), manifest.members != nil else { return nil }
        }
        return Digest.sha256(data)
    }

    /// Completes the entries being built that are whole (`.new-…` with both its record and its
    /// contents: a save that kept the version it replaced and died before renaming it), and
    /// removes entries being built or removed (`.new-…`, `.removing-…`) that are more than an
    /// hour old: left by a process that died.
    func removeAbandonedEntries(in folder: URL) {
        completeInterruptedEntries(in: folder)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let cutoff = Date().addingTimeInterval(-3600)
        for name in names where name.hasPrefix(".new-") || name.hasPrefix(".removing-") {
            let entry = folder.appendingPathComponent(name)
            let attributes = try? FileManager.default.attributesOfItem(atPath: entry.path)
            if let modified = attributes?[.modificationDate] as? Date, modified < cutoff {
                try? FileManager.default.removeItem(at: entry)
            }
        }
    }

    /// Renames every whole `.new-…` entry in `folder` to its id (see ``removeAbandonedEntries(in:)``).
    func completeInterruptedEntries(in folder: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name.hasPrefix(".new-") {
            let entry = folder.appendingPathComponent(name)
            guard let record = try? readRecord(in: entry),
                FileManager.default.fileExists(atPath: entry.appendingPathComponent("item").path)
            else { continue }
            _ = completeEntry(entry, id: record.id, in: folder)
        }
    }

    /// Flushes a folder's entries (durable stores only).
    func synchronize(_ folder: URL) {
        guard durability == .durable else { return }
        let fd = open(folder.path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
