import DocumentKitSystem
import FilePackages
import FormatVersioning
import Foundation

/// The store's folders and files (`Formats/version-store/v1/SPEC.md`):
///
///     .documentkit-versions/store.json
///     .documentkit-versions/documents/KEY/ID/record.json
///     .documentkit-versions/documents/KEY/ID/item
extension VersionStore {
    /// The store format this code writes, and the newest it reads.
    static let formatVersion = 1
    static let formatIdentifier = "org.documentkit.version-store"

    /// Which document an item is, in the store.
    struct DocumentKey: Sendable, Hashable {
        /// The folder name under `documents/`.
        var folderName: String
        /// The manifest's document identifier, when the item has one.
        var identifier: String?
    }

    var documentsURL: URL { url.appendingPathComponent("documents", isDirectory: true) }

    func folder(for key: DocumentKey) -> URL { documentsURL.appendingPathComponent(key.folderName, isDirectory: true) }

    /// The key of the item at `itemURL`: `id-IDENTIFIER` for a package whose manifest has a
    /// document identifier (hashed when it isn't a safe name), else `path-` and a digest of the
    /// item's path relative to the library.
    func documentKey(forItemAt itemURL: URL) -> DocumentKey {
        if let identifier = documentIdentifier(ofItemAt: itemURL) {
            let safe = identifier.utf8.count <= 100 && !identifier.isEmpty && identifier.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E
            } && identifier != "." && identifier != ".."
            return DocumentKey(folderName: "id-" + (safe ? identifier : String(Digest.sha256(Data(identifier.utf8)).prefix(32))), identifier: identifier)
        }
        let itemPath = itemURL.standardizedFileURL.path
        let libraryPath = libraryURL.path.hasSuffix("/") ? libraryURL.path : libraryURL.path + "/"
        let relative = itemPath.hasPrefix(libraryPath) ? String(itemPath.dropFirst(libraryPath.count)) : itemPath
        return DocumentKey(folderName: "path-" + String(Digest.sha256(Data(relative.utf8)).prefix(32)), identifier: nil)
    }

    /// The document identifier in the item's manifest, if it is a package with a readable one.
    func documentIdentifier(ofItemAt itemURL: URL) -> String? {
        let manifestURL = itemURL.appendingPathComponent(manifestName)
        guard let data = try? Data(contentsOf: manifestURL), data.count <= 8 << 20 else { return nil }
        let package = FileWrapper(directoryWithFileWrappers: [manifestName: FileWrapper(regularFileWithContents: data)])
        guard let manifest = try? DocumentManifest(package: package, manifestName: manifestName, packagePath: itemURL.path) else {
            return nil
        }
        return manifest.documentIdentifier.isEmpty ? nil : manifest.documentIdentifier
    }

    /// Creates the store's folders and `store.json` if missing; refuses a store written in a newer format.
    func prepareStore() throws(DocumentKitError) {
        try checkStoreFormat()
        let manager = FileManager.default
        do { try manager.createDirectory(at: documentsURL, withIntermediateDirectories: true) } catch {
            throw DocumentKitError(.ioError, operation: .create, path: documentsURL.path, detail: "Can't create the version store: \(error.localizedDescription)")
        }
        let storeFile = url.appendingPathComponent("store.json")
        if !manager.fileExists(atPath: storeFile.path) {
            let text = "{\n  \"format\" : \"\(Self.formatIdentifier)\",\n  \"version\" : \(Self.formatVersion)\n}\n"
            _ = try FileWrapper(regularFileWithContents: Data(text.utf8)).write(to: storeFile, options: SaveOptions(durability: durability))
        }
    }

    /// Throws when `store.json` names a newer store format (this code must not change such a store).
    func checkStoreFormat() throws(DocumentKitError) {
        let storeFile = url.appendingPathComponent("store.json")
        guard let data = try? Data(contentsOf: storeFile) else { return }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            object["format"] as? String == Self.formatIdentifier, let version = object["version"] as? Int
        else {
            throw DocumentKitError(.corruptData, operation: .read, path: storeFile.path, detail: "This is not a DocumentKit version store description.")
        }
        guard version <= Self.formatVersion else {
            throw DocumentKitError(
                .newerFormat, operation: .read, path: storeFile.path,
                detail: "The version store is in format \(version); this version of DocumentKit reads up to \(Self.formatVersion).")
        }
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
