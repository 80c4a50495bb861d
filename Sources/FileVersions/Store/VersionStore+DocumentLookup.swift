import DocumentKitSystem
import Foundation

extension VersionStore {
    /// Which document of the store an item is, and how that was found.
    struct DocumentLookup {
        /// Where new versions of the item go.
        var key: DocumentKey
        /// The folders whose versions are the item's, `key` first.
        var keys: [DocumentKey]
        var identification: VersionListing.Identification
        /// Why the manifest's identifier could not be used, when it could not.
        var problem: DocumentKitError?
    }

    /// Finds the document the item at `itemURL` is.
    ///
    /// A package whose manifest names a document identifier is that document; a file, or a
    /// package without a manifest, is known by its path. A package whose manifest is there but
    /// can't be read (truncated, not JSON, an invalid identifier) is known by its name: its
    /// versions are those of every document whose versions were recorded under the item's file
    /// name (`record.json`'s `name`) and whose identifier no other item in the item's folder
    /// holds, with those kept under its path; new versions go to the document with the newest
    /// such version.
    func lookUpDocument(ofItemAt itemURL: URL) -> DocumentLookup {
        switch readIdentifier(ofItemAt: itemURL) {
        case .identifier(let identifier):
            let key = Self.key(forIdentifier: identifier)
            return DocumentLookup(key: key, keys: [key], identification: .documentIdentifier)
        case .noManifest:
            let key = pathKey(forItemAt: itemURL)
            return DocumentLookup(key: key, keys: [key], identification: .path)
        case .unreadable(let reason):
            let pathKey = pathKey(forItemAt: itemURL)
            let found = documentsRecorded(underName: itemURL.lastPathComponent, besides: itemURL)
            let names = found.isEmpty ? "none were found under it" : "they are those recorded under it"
            let problem = DocumentKitError(
                .corruptData, operation: .read, path: reason.path,
                detail: "The document identifier can't be read (\(reason.detail ?? reason.description)), so the item's versions "
                    + "were looked up by its name “\(itemURL.lastPathComponent)”: \(names). Restoring a version gives the item its identifier back.")
            return DocumentLookup(key: found.first ?? pathKey, keys: found + [pathKey], identification: .name, problem: problem)
        }
    }

    /// The documents (`id-` folders) with a version recorded under the file name `name`, newest
    /// such version first, without those whose identifier an item beside `itemURL` holds.
    func documentsRecorded(underName name: String, besides itemURL: URL) -> [DocumentKey] {
        waitForPendingVersions()  // it reads the records of every document's versions
        guard let folders = names(inFolderAt: documentsURL.path) else { return [] }
        var found: [(key: DocumentKey, newest: String)] = []
        for folderName in folders where folderName.hasPrefix("id-") {
            let folder = documentsURL.appendingPathComponent(folderName, isDirectory: true)
            let entries = (names(inFolderAt: folder.path) ?? [])
                .filter(VersionIdentifier.isValid).sorted(by: >)
            for entry in entries {
                guard let record = try? readRecord(in: folder.appendingPathComponent(entry, isDirectory: true)),
                    record.name == name
                else { continue }
                found.append((DocumentKey(folderName: folderName, identifier: record.documentIdentifier), entry))
                break
            }
        }
        guard !found.isEmpty else { return [] }
        let held = identifiersHeld(besides: itemURL)
        return found.filter { candidate in candidate.key.identifier.map { !held.contains($0) } ?? true }
            .sorted { $0.newest > $1.newest }.map(\.key)
    }

    /// The document identifiers of the other items in the folder of `itemURL`.
    private func identifiersHeld(besides itemURL: URL) -> Set<String> {
        let folder = itemURL.deletingLastPathComponent()
        let names = names(inFolderAt: folder.path, followingLink: true) ?? []
        var held: Set<String> = []
        for name in names where name != itemURL.lastPathComponent && name != Self.folderName {
            if let identifier = documentIdentifier(ofItemAt: folder.appendingPathComponent(name, isDirectory: true)) { held.insert(identifier) }
        }
        return held
    }
}
