#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FilePackages
import FileVersions
import FormatVersioning
import Foundation
import SystemPackage

/// Reads one package of a library into an ``EntryRecord``, without coordinating: the manifest
/// (parsed, format and version checked) and the presence and size of every member it lists
/// (`fstatat`, no hashing).
struct EntryReader: Sendable {
    let configuration: DocumentIndex.Configuration
    let libraryPath: String
    /// The shared parts of the records it reads (the library URL, looked up once).
    let interner: RecordInterner
    /// The library's version store, for conflict counts (one per index: it remembers what it read).
    let versionStore: VersionStore

    var fileSystem: FileSystem { configuration.fileSystem }

    init(configuration: DocumentIndex.Configuration) {
        self.configuration = configuration
        self.libraryPath = configuration.folderURL.standardizedFileURL.path
        interner = RecordInterner(libraryURL: configuration.folderURL)
        versionStore = VersionStore(
            libraryURL: configuration.folderURL, manifestName: configuration.manifestName, fileSystem: configuration.fileSystem)
    }

    func absolutePath(_ relativePath: String) -> String {
        relativePath.isEmpty ? libraryPath : (libraryPath == "/" ? "/" : libraryPath + "/") + relativePath
    }

    /// Whether `name` (one path component) names a package of the library.
    func isPackageName(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return configuration.packageExtensions.contains(String(name[name.index(after: dot)...]))
    }

    /// The package folder's stamp, or nil if there is no package folder at `relativePath`.
    func packageStamp(_ relativePath: String) -> FileStamp? {
        guard let status = try? fileSystem.status(of: absolutePath(relativePath), in: AT_FDCWD),
            status.kind == .directory
        else { return nil }
        return FileStamp(status)
    }

    /// The manifest's stamp, nil if it is not there.
    func manifestStamp(_ relativePath: String) -> FileStamp? {
        guard let status = try? fileSystem.status(of: absolutePath(relativePath) + "/" + configuration.manifestName, in: AT_FDCWD)
        else { return nil }
        return FileStamp(status)
    }

    /// The stamp of the document's folder in the library's version store, nil if it has none.
    func conflictStamp(identifier: String?) -> FileStamp? {
        guard let identifier else { return nil }
        let path = absolutePath(VersionStore.folderName + "/documents/" + VersionStore.documentFolderName(forIdentifier: identifier))
        guard let status = try? fileSystem.status(of: path, in: AT_FDCWD), status.kind == .directory else { return nil }
        return FileStamp(status)
    }

    /// Reads the package at `relativePath`; nil if it is no longer a package folder.
    func read(_ relativePath: String) -> EntryRecord? {
        let path = absolutePath(relativePath)
        let folder: Descriptor
        do { folder = Descriptor(owning: try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
            return nil
        }
        guard let folderStatus = try? fileSystem.status(of: folder.rawValue, name: path), folderStatus.kind == .directory else { return nil }
        var entry = IndexEntry(
            libraryURL: configuration.folderURL, relativePath: relativePath, documentIdentifier: nil, formatIdentifier: nil,
            formatVersion: nil, key: nil, fields: [:], modificationDate: nil, state: .current)
        let manifestPath = path + "/" + configuration.manifestName
        let manifestFD: CInt
        do { manifestFD = try fileSystem.open(configuration.manifestName, in: folder.rawValue, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            entry.state = error == .noSuchFileOrDirectory
                ? .incomplete("The manifest \(configuration.manifestName) is not there (yet).")
                : .damaged("\(manifestPath) can't be opened: \(error.readableDescription).")
            return EntryRecord(entry: entry, package: FileStamp(folderStatus), manifest: nil, conflicts: nil)
        }
        let manifestDescriptor = Descriptor(owning: manifestFD)
        let manifestStatus: FileStatus
        do { manifestStatus = try fileSystem.status(of: manifestDescriptor.rawValue, name: manifestPath) } catch {
            entry.state = .damaged("\(manifestPath) can't be read (fstat): \(error.readableDescription).")
            return EntryRecord(entry: entry, package: FileStamp(folderStatus), manifest: nil, conflicts: nil)
        }
        let stamp = FileStamp(manifestStatus)
        entry.modificationDate = Date(timeIntervalSince1970: Double(manifestStatus.modificationTime) / 1e9)
        // The record is made once, at the end (from the entry, as far as it was read).
        let package = FileStamp(folderStatus)
        var interner = self.interner
        guard manifestStatus.kind == .regular else {
            entry.state = .damaged("\(manifestPath) is not a regular file.")
            return EntryRecord(entry: entry, package: package, manifest: stamp, conflicts: nil, memberFolders: nil, interner: &interner)
        }
        guard manifestStatus.size <= Int64(DocumentManifest.Limits.maximumSize) else {
            entry.state = .damaged("\(manifestPath) is \(manifestStatus.size) bytes, more than a manifest may be (8 MiB).")
            return EntryRecord(entry: entry, package: package, manifest: stamp, conflicts: nil, memberFolders: nil, interner: &interner)
        }
        let data: Data
        do { data = try readAll(manifestDescriptor.rawValue, size: Int(manifestStatus.size), name: manifestPath, using: fileSystem) } catch {
            entry.state = .damaged("\(manifestPath) can't be read: \(error.readableDescription).")
            return EntryRecord(entry: entry, package: package, manifest: stamp, conflicts: nil, memberFolders: nil, interner: &interner)
        }
        let manifest: DocumentManifest
        do { manifest = try DocumentManifest(jsonData: data, path: manifestPath) } catch {
            // A manifest caught half-written by an in-place writer reads as malformed: it is
            // damaged until its stamp changes again.
            entry.state = .damaged(error.detail ?? error.description)
            return EntryRecord(entry: entry, package: package, manifest: stamp, conflicts: nil, memberFolders: nil, interner: &interner)
        }
        entry.documentIdentifier = manifest.documentIdentifier
        entry.formatIdentifier = manifest.formatIdentifier
        entry.formatVersion = manifest.formatVersion
        if let keyField = configuration.keyField { entry.key = manifest.additionalFields[keyField]?.stringValue }
        var fields: [String: RawJSONValue] = [:]
        for field in configuration.fields {
            if let value = manifest.additionalFields[field] { fields[field] = value }
        }
        entry.fields = fields
        let memberFolders = memberFolderStamps(of: manifest, in: folder.rawValue)
        entry.state = state(of: manifest, in: folder.rawValue, path: path)
        var conflicts: FileStamp?
        if case .current = entry.state {
            conflicts = conflictStamp(identifier: manifest.documentIdentifier)
            if conflicts != nil {
                let count = conflictCount(identifier: manifest.documentIdentifier)
                if count > 0 { entry.state = .unresolvedConflicts(count) }
            }
        }
        return EntryRecord(
            entry: entry, package: package, manifest: stamp, conflicts: conflicts, memberFolders: memberFolders, interner: &interner)
    }

    /// The state the manifest and the members on disk show.
    private func state(of manifest: DocumentManifest, in folder: CInt, path: String) -> IndexEntry.State {
        if let format = configuration.formatIdentifier, manifest.formatIdentifier != format {
            return .damaged("\(path) is in another format, \(manifest.formatIdentifier), not \(format).")
        }
        if let reader = configuration.readerVersion, manifest.minimumReaderVersion > reader {
            return .tooNew(manifest.minimumReaderVersion)
        }
        guard let members = manifest.members, !members.isEmpty else { return .current }
        var matching = 0
        var firstProblem: String?
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            let status = try? fileSystem.status(of: name, in: folder)
            if let status, status.kind == .regular, status.size == member.size {
                matching += 1
            } else if firstProblem == nil {
                firstProblem = status == nil
                    ? "\(name) is missing"
                    : status?.kind != .regular ? "\(name) is not a file" : "\(name) is \(status!.size) bytes, not \(member.size)"
            }
        }
        guard let firstProblem else { return .current }
        return .incomplete("\(matching) of \(members.count) members match; \(firstProblem).")
    }

    /// `old` with its conflicts counted again, when only its document's folder in the version
    /// store changed since it was read (its package, manifest and member folders are as they
    /// were): as ``read(_:)`` counts them, without reading the package. Nil for a record that is
    /// not current (it is read again whole).
    func recountingConflicts(of old: EntryRecord) -> EntryRecord? {
        guard case .current = old.state, let identifier = old.identifier.text else { return nil }
        var record = old
        record.conflicts = conflictStamp(identifier: identifier)
        if record.conflicts != nil {
            let count = conflictCount(identifier: identifier)
            if count > 0 { record.state = .unresolvedConflicts(count) }
        }
        return record
    }

    /// How many unresolved conflict versions the version store keeps of the document whose
    /// manifest, just read, names `identifier` (the store need not read it again).
    func conflictCount(identifier: String) -> Int {
        (try? versionStore.unresolvedConflictCount(ofDocumentIdentifier: identifier)) ?? 0
    }
}
