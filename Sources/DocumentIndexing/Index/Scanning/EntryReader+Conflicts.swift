#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FileVersions
import SystemPackage

extension EntryReader {
    /// The names of the document folders in the library's version store (one `readdir`): a
    /// refresh stats the conflict folder only of the documents named here, not one per entry.
    /// Empty when there is no store; nil when it can't be listed (every entry is then checked).
    func conflictFolderNames() -> Set<String>? {
        let path = absolutePath(VersionStore.folderName + "/documents")
        let folder: Descriptor
        do { folder = Descriptor(owning: try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
            return error == .noSuchFileOrDirectory ? [] : nil
        }
        guard let names = try? fileSystem.contentsOfDirectory(folder.rawValue, name: path) else { return nil }
        return Set(names)
    }

    /// The identifiers that are UUIDs among the version store's folder names (`id-` and the
    /// identifier as the manifest writes it): a record of such an identifier is looked up here,
    /// without making its folder's name.
    static func uuidIdentifiers(inConflictFolders names: Set<String>) -> Set<CompactIdentifier> {
        var identifiers = Set<CompactIdentifier>()
        for name in names where name.hasPrefix("id-") {
            switch CompactIdentifier(String(name.dropFirst(3))) {
            case .upper(let uuid): identifiers.insert(.upper(uuid))
            case .lower(let uuid): identifiers.insert(.lower(uuid))
            case .none, .text: continue
            }
        }
        return identifiers
    }

    /// Whether the document's conflict folder is as `old` recorded it; `names` is
    /// ``conflictFolderNames()`` of this refresh, nil to stat it.
    func conflictsUnchanged(_ old: EntryRecord, names: Set<String>?) -> Bool {
        if let names, old.conflicts == nil, names.isEmpty { return true }
        guard let identifier = old.identifier.text else { return old.conflicts == nil }
        if let names, old.conflicts == nil, !names.contains(VersionStore.documentFolderName(forIdentifier: identifier)) {
            return true
        }
        return conflictStamp(identifier: identifier) == old.conflicts
    }
}
