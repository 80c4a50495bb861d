import Foundation

extension IndexSnapshot {
    /// Completes the moves a walk saw one half of. A walk lists one folder after another while
    /// other programs work: a document moved from a folder not listed yet into one listed
    /// already is seen at neither path, one moved the other way at both; so is one renamed while
    /// its folder is read (`readdir` returns it under either name, both or neither). The other
    /// half would come with the move's events, in the next batch: an add and a removal then, not
    /// a move.
    ///
    /// - A document `walked` found new whose identifier another record holds: that record's path
    ///   is checked again (a stat or two; a copy's original is still there).
    /// - A document `walked` found gone whose identifier no document found new holds: the
    ///   folders the walk listed are listed again, once.
    ///
    /// Only what a walk found (a new folder, a relisted one, a sweep): never the packages events
    /// name, whose two halves are one event pair.
    /// Returns what changed since `changes` (which hold `walked`).
    mutating func completeMoves(seenBy walked: Changes, using reader: EntryReader, after changes: Changes) -> Changes {
        var more = Changes()
        let found = Set(walked.added.lazy.map(\.identifier).filter { $0 != .none })
        if !found.isEmpty {
            let settled = Set((changes.added + changes.removed).map(\.relativePath))
            let others = records.values.lazy
                .filter { found.contains($0.identifier) && !settled.contains($0.relativePath) }
                .map(\.relativePath)
            for path in Array(others) { revalidate(path, using: reader, into: &more) }
        }
        let added = Set((changes.added + more.added).lazy.map(\.identifier))
        let unpaired = walked.removed.contains { $0.identifier != .none && !added.contains($0.identifier) }
        let listedFolders = walked.foldersChanged.filter { $0.value != nil }.keys
        guard unpaired, !listedFolders.isEmpty else { return more }
        for folder in listedFolders where folders[folder] != nil { markUnlisted(folder, into: &more) }
        more.merge(refresh(using: reader, listingOnly: true))
        return more
    }
}
