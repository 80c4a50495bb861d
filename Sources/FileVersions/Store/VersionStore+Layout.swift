#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import FormatVersioning
import Foundation
import SystemPackage

/// The store's folders and files (`Formats/version-store/v4/SPEC.md`):
///
///     .documentkit-versions/store.json
///     .documentkit-versions/documents/KEY/ID/record.json
///     .documentkit-versions/documents/KEY/ID/item
extension VersionStore {
    /// The store format this code writes, and the newest it reads.
    static let formatVersion = 4
    static let formatIdentifier = "org.documentkit.version-store"

    /// Which document an item is, in the store.
    struct DocumentKey: Sendable, Hashable {
        /// The folder name under `documents/`.
        var folderName: String
        /// The manifest's document identifier, when the item has one.
        var identifier: String?
    }

    func folder(for key: DocumentKey) -> URL { documentsURL.appendingPathComponent(key.folderName, isDirectory: true) }

    /// The key of the item at `itemURL`: `id-IDENTIFIER` for a package whose manifest has a
    /// document identifier (hashed when it isn't a safe name), else `path-` and a digest of the
    /// item's path relative to the library; for a package whose manifest can't be read, the
    /// document its versions were recorded under by name (see ``lookUpDocument(ofItemAt:)``).
    func documentKey(forItemAt itemURL: URL) -> DocumentKey {
        lookUpDocument(ofItemAt: itemURL).key
    }

    /// The key of the document with the manifest identifier `identifier`.
    static func key(forIdentifier identifier: String) -> DocumentKey {
        let safe = identifier.utf8.count <= 100 && !identifier.isEmpty && identifier.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        } && identifier != "." && identifier != ".."
        return DocumentKey(folderName: "id-" + (safe ? identifier : String(Digest.sha256(Data(identifier.utf8)).prefix(32))), identifier: identifier)
    }

    /// The `path-` key of the item at `itemURL`: a digest of its path relative to the library.
    func pathKey(forItemAt itemURL: URL) -> DocumentKey {
        let itemPath = itemURL.standardizedFileURL.path
        let libraryPath = libraryURL.path.hasSuffix("/") ? libraryURL.path : libraryURL.path + "/"
        let relative = itemPath.hasPrefix(libraryPath) ? String(itemPath.dropFirst(libraryPath.count)) : itemPath
        return DocumentKey(folderName: "path-" + String(Digest.sha256(Data(relative.utf8)).prefix(32)), identifier: nil)
    }

    /// The document identifier in the item's manifest, if it is a package with a readable one.
    func documentIdentifier(ofItemAt itemURL: URL) -> String? {
        if case .identifier(let identifier) = readIdentifier(ofItemAt: itemURL) { return identifier }
        return nil
    }

    /// What the item's manifest says of its document identifier.
    enum IdentifierReading: Sendable {
        /// The manifest's document identifier.
        case identifier(String)
        /// The item is a file, or a package without a manifest member.
        case noManifest
        /// The manifest is there but can't be read, or has no identifier: why.
        case unreadable(DocumentKitError)
    }

    /// Reads the document identifier of the item's manifest (``manifestName``); a manifest
    /// this store read before and that is unchanged is not read again (a save asks several times).
    func readIdentifier(ofItemAt itemURL: URL) -> IdentifierReading {
        let manifestURL = itemURL.appendingPathComponent(manifestName)
        let reading: IdentifierReading?
        do throws(DocumentKitError) {
            reading = try readCachedStoreFile(
                manifestURL, limit: 8 << 20,
                failure: { DocumentKitError($0, operation: .read, path: manifestURL.path, step: "reading the document identifier") }
            ) { data in identifier(inManifest: data, itemURL: itemURL, manifestURL: manifestURL) }
        } catch {
            return .unreadable(error)
        }
        return reading ?? .noManifest
    }

    private func identifier(inManifest data: Data, itemURL: URL, manifestURL: URL) -> IdentifierReading {
        let package = FileWrapper(directoryWithFileWrappers: [manifestName: FileWrapper(regularFileWithContents: data)])
        do throws(DocumentKitError) {
            let manifest = try DocumentManifest(package: package, manifestName: manifestName, packagePath: itemURL.path)
            guard !manifest.documentIdentifier.isEmpty else {
                return .unreadable(DocumentKitError(.corruptData, operation: .read, path: manifestURL.path, detail: "The manifest's document identifier is empty."))
            }
            return .identifier(manifest.documentIdentifier)
        } catch {
            return .unreadable(error)
        }
    }

    /// Creates the store's folders and `store.json` if missing, and migrates a version 1 store;
    /// refuses a store written in a newer format.
    func prepareStore() throws(DocumentKitError) {
        var version = try checkOrRepairStoreFormat()
        try makeFolder(libraryURL, "Can't create the library folder of the version store")
        try makeFolder(url, "Can't create the version store")
        try makeFolder(documentsURL, "Can't create the version store")
        if version == nil {
            try createStoreDescription()
            version = try checkStoreFormat()
        }
        if version == 1 { try migrateFromVersion1() }
        if version == 2 || version == 3 { try migrateFromVersion(version!) }
    }

    /// `mkdir`, where a folder that is there already is fine.
    func makeFolder(_ folder: URL, _ detail: String) throws(DocumentKitError) {
        do { try fileSystem.makeDirectory(folder.path, in: AT_FDCWD, mode: 0o777) } catch {
            guard error == .fileExists else {
                throw DocumentKitError(
                    DocumentKitError.Code(errno: error), operation: .save, path: folder.path, step: "creating a folder of the version store",
                    errno: error, detail: detail)
            }
            return
        }
        // Made now: its name reaches the disk before anything is kept in it (the versions of a
        // document's first save would otherwise hang on a folder no flushed folder names). A
        // batched store's next `syncfs` flushes it with everything else.
        if durability == .durable { try synchronize(folder.deletingLastPathComponent(), "flushing the folder that names a new folder of the version store") }
    }

    /// Opens a folder of the store by path.
    /// The names in the folder at `path` through the seam (one `open` and `getdents`), nil if it
    /// can't be listed.
    func names(inFolderAt path: String, followingLink: Bool = false) -> [String]? {
        let flags = O_RDONLY | O_DIRECTORY | (followingLink ? 0 : O_NOFOLLOW)
        guard let fd = try? fileSystem.open(path, in: AT_FDCWD, flags: flags) else { return nil }
        let folder = Descriptor(owning: fd)
        return try? fileSystem.contentsOfDirectory(folder.rawValue, name: path)
    }

    /// The bytes of the regular file at `path` (a symbolic link followed), through the seam; nil
    /// otherwise (``/FilePackages/readRegularFile(atPath:followingLink:limit:using:)``).
    func contentsOfFile(atPath path: String) -> Data? {
        readRegularFile(atPath: path, followingLink: true, using: fileSystem)
    }

    func openFolder(_ folder: URL, _ step: String) throws(DocumentKitError) -> Descriptor {
        do { return Descriptor(owning: try fileSystem.open(folder.path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)) } catch {
            throw DocumentKitError(error, operation: .save, path: folder.path, step: step)
        }
    }

    /// The description `store.json` of this code's format.
    static var storeDescription: Data {
        Data("{\n  \"format\" : \"\(formatIdentifier)\",\n  \"version\" : \(formatVersion)\n}\n".utf8)
    }

    /// Writes `data` to a new hidden file in `folder` (flushed for a durable store); returns its name.
    func writeTemporaryFile(_ data: Data, named name: String, in folder: Descriptor, path: String) throws(DocumentKitError) -> String {
        let temporary = TemporaryName.make(for: name, purpose: "new")
        do throws(Errno) {
            let fd = try fileSystem.open(temporary, in: folder.rawValue, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644)
            do throws(Errno) {
                try fileSystem.write(fd, data, name: temporary)
                if durability.isDurable { try fileSystem.synchronize(fd, name: temporary) }
            } catch {
                Glibc.close(fd)
                throw error
            }
            try fileSystem.close(fd, name: temporary)
        } catch {
            _ = try? fileSystem.unlink(temporary, in: folder.rawValue)
            throw DocumentKitError(error, operation: .save, path: path + "/" + name, step: "writing “\(name)”")
        }
        return temporary
    }

    /// Creates `store.json` atomically without ever replacing one: written under a hidden name,
    /// then linked to its name (another process that created it first wins).
    func createStoreDescription() throws(DocumentKitError) {
        let folder = try openFolder(url, "opening the version store")
        let temporary = try writeTemporaryFile(Self.storeDescription, named: "store.json", in: folder, path: url.path)
        defer { _ = try? fileSystem.unlink(temporary, in: folder.rawValue) }
        do { try fileSystem.link(temporary, in: folder.rawValue, as: "store.json", in: folder.rawValue) } catch {
            guard error == .fileExists else {
                throw DocumentKitError(error, operation: .save, path: url.path + "/store.json", step: "creating the version store's description")
            }
        }
        if durability.isDurable { try? fileSystem.synchronizeDirectory(folder.rawValue, name: url.path) }
    }

    /// Reads a small file of the store (at most `limit` bytes) through the seam; nil when it is not there.
    func readStoreFile(_ file: URL, limit: Int64 = 1 << 20) throws(Errno) -> Data? {
        let fd: CInt
        do { fd = try fileSystem.open(file.path, in: AT_FDCWD, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error == .noSuchFileOrDirectory || error == .notDirectory { return nil }
            throw error
        }
        defer { Glibc.close(fd) }
        let status = try fileSystem.status(of: fd, name: file.path)
        guard status.size <= limit else { throw .fileTooLarge }
        return try readAll(fd, size: Int(status.size), name: file.path, using: fileSystem)
    }

    /// Reads and decodes a small file of the store (at most `limit` bytes) through the seam,
    /// unless this store decoded it before and it is unchanged (same identity by `fstat` of the
    /// open file, and older than that reading): then that value is returned, and nothing is read.
    /// Nil when the file is not there. Not `remembering`, a value read is not kept (a caller
    /// that keeps what it needs of it, such as ``ConflictTally``, holds no copy of every file).
    func readCachedStoreFile<T: Sendable>(
        _ file: URL, limit: Int64 = 1 << 20, remembering: Bool = true, failure: (Errno) -> DocumentKitError,
        decode: (Data) throws(DocumentKitError) -> T
    ) throws(DocumentKitError) -> T? {
        let referenceTime = DigestClock.now()
        // Known and unchanged: one `lstat`, nothing opened (a listing does this for every version).
        if let status = try? fileSystem.status(of: file.path, in: AT_FDCWD), status.kind == .regular,
            let known = fileCache.value(at: file.path, identity: status.identity, as: T.self)
        {
            return known
        }
        let fd: CInt
        do { fd = try fileSystem.open(file.path, in: AT_FDCWD, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error == .noSuchFileOrDirectory || error == .notDirectory { return nil }
            throw failure(error)
        }
        defer { Glibc.close(fd) }
        let data: Data
        let status: FileStatus
        do throws(Errno) {
            status = try fileSystem.status(of: fd, name: file.path)
            if let known = fileCache.value(at: file.path, identity: status.identity, as: T.self) { return known }
            guard status.size <= limit else { throw Errno.fileTooLarge }
            data = try readAll(fd, size: Int(status.size), name: file.path, using: fileSystem)
        } catch { throw failure(error) }
        let value = try decode(data)
        if remembering { fileCache.remember(value, at: file.path, identity: status.identity, referenceTime: referenceTime) }
        return value
    }

    /// The format version in `store.json` (nil when there is none yet); throws when it names a
    /// newer store format (this code must not change such a store), is not a store description,
    /// or is damaged (see ``checkOrRepairStoreFormat()``).
    @discardableResult
    func checkStoreFormat() throws(DocumentKitError) -> Int? {
        let storeFile = descriptionURL
        let description = try readCachedStoreFile(
            storeFile,
            failure: { DocumentKitError($0, operation: .read, path: storeFile.path, step: "reading the version store's description") },
            decode: { Self.describe($0) })
        guard let description else { return nil }
        switch description {
        case .foreign:
            throw DocumentKitError(.corruptData, operation: .read, path: storeFile.path, detail: "This is not a DocumentKit version store description.")
        case .damaged(let reason):
            throw DocumentKitError(
                .corruptData, operation: .read, path: storeFile.path, step: Self.damagedDescriptionStep,
                detail: "The version store's description is damaged: \(reason).")
        case .version(let version):
            guard version <= Self.formatVersion else {
                throw DocumentKitError(
                    .newerFormat, operation: .read, path: storeFile.path,
                    detail: "The version store is in format \(version); this version of DocumentKit reads up to \(Self.formatVersion).")
            }
            return version
        }
    }

    /// The step of the error of a damaged `store.json` (what ``checkOrRepairStoreFormat()`` repairs).
    static let damagedDescriptionStep = "reading the version store's description"

    /// What a `store.json` says.
    enum StoreDescription: Equatable, Sendable {
        /// A description of this store format's `version`.
        case version(Int)
        /// A JSON object describing another format: not this code's to change.
        case foreign
        /// Not a JSON object, or one without a format and version: why.
        case damaged(String)
    }

    static func describe(_ data: Data) -> StoreDescription {
        let parsed: Any
        do { parsed = try JSONSerialization.jsonObject(with: data) } catch { return .damaged("it is not valid JSON") }
        guard let object = parsed as? [String: Any] else { return .damaged("it is not a JSON object") }
        guard let format = object["format"] as? String else { return .damaged("it has no format") }
        guard format == formatIdentifier else { return .foreign }
        guard let version = object["version"] as? Int, version >= 1 else { return .damaged("it has no valid version") }
        return .version(version)
    }

    /// A new hidden name in `folder`, for an entry being built or removed.
    func temporaryEntryURL(in folder: URL, purpose: String) -> URL {
        folder.appendingPathComponent(".\(purpose)-\(TemporaryName.randomSuffix())", isDirectory: true)
    }
}

/// SHA-256 digests, for ids and keys.
enum Digest {
    static func sha256(_ data: Data) -> String {
        data.withUnsafeBytes { MemberHasher.sha256(of: $0) }
    }
}
