#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation

/// What killed processes leave in a document's folder of the store, found and settled by the
/// next save (under the folder's exclusive lock) or listing.
extension VersionStore {
    /// Completes the entries being built that are whole (`.new-…` with both its record and its
    /// contents: the record is written last; `.swap-…` that hold a package a save replaced,
    /// ``settleExchangeEntry(_:in:key:)``) and removes every other hidden entry (`.new-…`,
    /// `.swap-…` never exchanged, `.removing-…`): called only under the folder's exclusive lock (see
    /// ``prepareFolder(for:)``), when no process is building or removing one.
    /// Returns the folder's versions as they are then (nil if it can't be listed).
    @discardableResult
    func removeAbandonedEntries(in folder: URL, key: DocumentKey? = nil) -> VersionNames? {
        // Where ``WatchedFolderNames`` keeps the folder's names, only those changed since the last
        // save here are looked at (``FolderSummaries``); else one listing (a folder of hundreds of
        // versions costs a `getdents` of a few hundred microseconds on ext4, and each save does
        // this once) and one pass over the names, no copy of them, as most often there is nothing
        // hidden and no state entry; pruning takes the number of versions and the oldest from here.
        if let look = folderSummaries.look(atFolder: folder.path, using: fileSystem), !look.hasOthers { return look.versions }
        guard let listed = listedEntries(of: folder) else { return nil }
        var versions = VersionNames()
        var hasStates = false
        var hasHidden = false
        for name in listed.keys {
            switch FolderSummaries.kind(of: name) {
            case .version?: versions.add(name)
            case .hidden?: hasHidden = true
            case .state?: hasStates = true
            case nil: break
            }
        }
        guard hasStates || hasHidden else { return versions }
        let names = Array(listed.keys)
        if hasStates { removeOrphanedStates(in: folder, names: names) }
        guard hasHidden else { return versions }
        completeInterruptedEntries(in: folder, names: names)
        for name in names where name.hasPrefix(Self.exchangePrefix) { settleExchangeEntry(name, in: folder, key: key) }
        guard let left = listedEntries(of: folder).map({ Array($0.keys) }), let fd = try? openFolder(folder, "removing abandoned entries")
        else { return nil }
        // A `.swap-` entry still there holds a replaced package that could not be completed yet.
        for name in left where Self.isHiddenEntry(name) && !name.hasPrefix(Self.exchangePrefix) {
            _ = try? removeItem(name, in: fd.rawValue, using: fileSystem)
        }
        return VersionNames(left)
    }

    /// Whether `name` in a document folder is an entry being built or left by a killed process
    /// (`.new-…`, `.swap-…`, `.removing-…`).
    static func isHiddenEntry(_ name: String) -> Bool {
        name.hasPrefix(".new-") || name.hasPrefix(exchangePrefix) || name.hasPrefix(".removing-")
    }

    /// Renames every whole `.new-…` entry in `folder` to its id (see ``removeAbandonedEntries(in:)``);
    /// `names`: the folder's names, if just listed.
    func completeInterruptedEntries(in folder: URL, names listed: [String]? = nil) {
        guard let fd = try? openFolder(folder, "listing versions"), let names = listed ?? listedEntries(of: folder).map({ Array($0.keys) })
        else { return }
        for name in names where name.hasPrefix(".new-") {
            let entry = folder.appendingPathComponent(name)
            guard let record = try? readRecord(in: entry),
                (try? fileSystem.status(of: name + "/item", in: fd.rawValue)) != nil
            else { continue }
            _ = completeEntry(entry, id: record.id, in: folder)
        }
    }
}
