import DocumentKitSystem
import Foundation

extension VersionStore {
    /// `version`, made an unresolved conflict version if the store had kept that state as an
    /// ordinary one (a save that replaced it without seeing the conflict, or the same contents
    /// kept at the same second): a state kept as a conflict is always one, so that a document is
    /// never ``FileVersion/isConflict``-less in its `conflictGained` event, nor `inConflict`
    /// without an unresolved conflict version.
    func markedAsConflict(_ version: FileVersion, ancestor: String?) throws(DocumentKitError) -> FileVersion {
        guard !version.isUnresolvedConflict else { return version }
        let entry = version.url.deletingLastPathComponent()
        var record = try currentRecord(of: entry)
        record.conflict = true
        record.resolved = false
        record.resolution = nil
        if record.ancestor == nil { record.ancestor = ancestor }
        try writeState(record, of: entry)
        return Self.version(from: record, itemURL: version.itemURL, contents: version.url)
    }
}
