extension IndexSnapshot {
    /// What changed in one or more refreshes, as its net effect on each path: whoever applies
    /// `removed`, then `added` and `changed` to what it knew gets what the snapshot holds now.
    ///
    /// A path is at most one of: removed (it was there, it is gone), added (it was not there),
    /// changed (there before and after), or removed and added (gone and back within these
    /// changes: the removal holds what it was, the addition what it is). A refresh that reads a
    /// document a shell is removing can see it changed and then gone: that is a removal, never a
    /// change (which would put the gone document back in a reader's view, and in the database).
    struct Changes: Sendable {
        private(set) var removed: [EntryRecord] = []
        private(set) var added: [EntryRecord] = []
        private(set) var changed: [EntryRecord] = []
        /// The paths in `removed`, `added` or `changed` (the common case, a path seen once, needs
        /// no search of the arrays).
        private var touched: Set<String> = []
        var foldersChanged: [String: FileStamp?] = [:]
        var accountedChanged: [String: FileStamp?] = [:]

        var isEmpty: Bool {
            removed.isEmpty && added.isEmpty && changed.isEmpty && foldersChanged.isEmpty && accountedChanged.isEmpty
        }

        init() {}

        /// Changes made of these, in this order (removals first).
        init(removed: [EntryRecord] = [], added: [EntryRecord] = [], changed: [EntryRecord] = []) {
            for record in removed { noteRemoved(record) }
            for record in added { noteAdded(record) }
            for record in changed { noteChanged(record) }
        }

        /// The document at `record`'s path is gone; `record` is what it was.
        mutating func noteRemoved(_ record: EntryRecord) {
            let path = record.relativePath
            guard touched.insert(path).inserted else {
                changed.removeAll { $0.relativePath == path }
                if let index = added.firstIndex(where: { $0.relativePath == path }) {
                    // New here (or back here after a removal already noted): gone again.
                    added.remove(at: index)
                    if !removed.contains(where: { $0.relativePath == path }) { touched.remove(path) }
                } else if !removed.contains(where: { $0.relativePath == path }) {
                    removed.append(record)
                }
                return
            }
            removed.append(record)
        }

        /// A document is at `record`'s path, where none was.
        mutating func noteAdded(_ record: EntryRecord) {
            guard touched.insert(record.relativePath).inserted else { return replaceOrAppend(record, in: \.added) }
            added.append(record)
        }

        /// The document at `record`'s path was there before and is now `record`.
        mutating func noteChanged(_ record: EntryRecord) {
            guard touched.insert(record.relativePath).inserted else { return replaceOrAppend(record, in: \.changed) }
            changed.append(record)
        }

        /// A path seen before: its latest record replaces the one noted (an addition stays an
        /// addition, a change a change); after a removal alone, `record` is the path's new state.
        private mutating func replaceOrAppend(_ record: EntryRecord, in list: WritableKeyPath<Changes, [EntryRecord]>) {
            let path = record.relativePath
            if let index = added.firstIndex(where: { $0.relativePath == path }) {
                added[index] = record
            } else if let index = changed.firstIndex(where: { $0.relativePath == path }) {
                changed[index] = record
            } else {
                self[keyPath: list].append(record)
            }
        }

        /// Takes the additions and changes of `paths` out (held back: the snapshot keeps what it
        /// knew of them); their removals stay.
        mutating func withdraw(_ paths: Set<String>) {
            guard !paths.isEmpty else { return }
            added.removeAll { paths.contains($0.relativePath) }
            changed.removeAll { paths.contains($0.relativePath) }
            for path in paths where !removed.contains(where: { $0.relativePath == path }) { touched.remove(path) }
        }

        /// Adds changes made after these.
        mutating func merge(_ later: Changes) {
            for record in later.removed { noteRemoved(record) }
            for record in later.added { noteAdded(record) }
            for record in later.changed { noteChanged(record) }
            for (path, stamp) in later.foldersChanged { foldersChanged[path] = stamp }
            for (path, stamp) in later.accountedChanged { accountedChanged[path] = stamp }
        }
    }
}
