extension IndexSnapshot {
    /// What changed in one or more refreshes, as its net effect on each path: whoever applies
    /// `removed`, then `added` and `changed` to what it knew gets what the snapshot holds now.
    ///
    /// A path is at most one of: removed (it was there, it is gone), added (it was not there),
    /// changed (there before and after), or removed and added (gone and back within these
    /// changes: the removal holds the record the index had, the addition what it is now), or
    /// restamped (its stamps alone changed: for the database only, nobody is told). A
    /// refresh that reads a document a shell is removing can see it changed and then gone: that
    /// is a removal, never a change (which would put the gone document back in a reader's view,
    /// and in the database).
    ///
    /// Each path's state is one dictionary entry, so noting a path again costs the same as the
    /// first time (a first scan notes 100,000); the lists are made when read (a few times a batch).
    struct Changes: Sendable {
        /// A path's net change.
        private enum State: Sendable {
            case removed(EntryRecord)
            case added(EntryRecord)
            case changed(EntryRecord)
            case replaced(old: EntryRecord, new: EntryRecord)
            /// Only its stamps changed (a version added to the store changes the stamp of the
            /// document's folder there): the database learns them; nobody is told.
            case restamped(EntryRecord)
        }

        private var states: [String: State] = [:]
        /// The paths in the order first noted (one whose changes cancelled out stays, without a state).
        private var order: [String] = []
        var foldersChanged: [String: FileStamp?] = [:]
        var accountedChanged: [String: FileStamp?] = [:]

        /// The documents gone, as the index had them.
        var removed: [EntryRecord] {
            order.compactMap { path in
                switch states[path] {
                case .removed(let old), .replaced(let old, _): old
                default: nil
                }
            }
        }

        /// The documents new at their paths (among them, those gone and back), as they are now.
        var added: [EntryRecord] {
            order.compactMap { path in
                switch states[path] {
                case .added(let new), .replaced(_, let new): new
                default: nil
                }
            }
        }

        /// The documents changed in place, as they are now.
        var changed: [EntryRecord] {
            order.compactMap { path in
                if case .changed(let new) = states[path] { new } else { nil }
            }
        }

        /// The documents whose stamps alone changed, as they are now (for the database only).
        var restamped: [EntryRecord] {
            order.compactMap { path in
                if case .restamped(let new) = states[path] { new } else { nil }
            }
        }

        var isEmpty: Bool { states.isEmpty && foldersChanged.isEmpty && accountedChanged.isEmpty }

        /// Whether a document was removed, added or changed (not only restamped).
        var hasDocumentChanges: Bool {
            states.values.contains { state in
                if case .restamped = state { false } else { true }
            }
        }

        init() {}

        /// Changes made of these, in this order (removals first).
        init(removed: [EntryRecord] = [], added: [EntryRecord] = [], changed: [EntryRecord] = []) {
            for record in removed { noteRemoved(record) }
            for record in added { noteAdded(record) }
            for record in changed { noteChanged(record) }
        }

        /// The document at `record`'s path is gone; `record` is what the index had.
        mutating func noteRemoved(_ record: EntryRecord) {
            let path = record.relativePath
            switch states[path] {
            case nil: set(.removed(record), at: path)
            case .added: clear(path)  // new here, gone again: nothing to tell
            case .changed, .restamped: states[path] = .removed(record)
            case .replaced(let old, _): states[path] = .removed(old)
            case .removed: break
            }
        }

        /// A document is at `record`'s path, where none was.
        mutating func noteAdded(_ record: EntryRecord) {
            let path = record.relativePath
            switch states[path] {
            case nil: set(.added(record), at: path)
            case .removed(let old), .replaced(let old, _): states[path] = .replaced(old: old, new: record)
            case .added: states[path] = .added(record)
            case .changed, .restamped: states[path] = .changed(record)
            }
        }

        /// The document at `record`'s path was there before and is now `record`.
        mutating func noteChanged(_ record: EntryRecord) {
            let path = record.relativePath
            switch states[path] {
            case nil: set(.changed(record), at: path)
            case .added: states[path] = .added(record)
            case .changed, .restamped: states[path] = .changed(record)
            // There after a removal: back, as `record`.
            case .removed(let old), .replaced(let old, _): states[path] = .replaced(old: old, new: record)
            }
        }

        /// The document at `record`'s path is as it was but for its stamps (``State/restamped(_:)``).
        mutating func noteRestamped(_ record: EntryRecord) {
            let path = record.relativePath
            switch states[path] {
            case nil: set(.restamped(record), at: path)
            case .added: states[path] = .added(record)
            case .changed: states[path] = .changed(record)
            case .restamped: states[path] = .restamped(record)
            case .removed(let old), .replaced(let old, _): states[path] = .replaced(old: old, new: record)
            }
        }

        /// Takes the additions and changes of `paths` out (held back: the snapshot keeps what it
        /// knew of them); their removals stay.
        mutating func withdraw(_ paths: Set<String>) {
            for path in paths {
                switch states[path] {
                case .added, .changed: clear(path)
                // The snapshot keeps the new stamps; so does the database.
                case .restamped: break
                case .replaced(let old, _): states[path] = .removed(old)
                case .removed, nil: break
                }
            }
        }

        /// Adds changes made after these.
        mutating func merge(_ later: Changes) {
            for path in later.order {
                switch later.states[path] {
                case .removed(let old): noteRemoved(old)
                case .added(let new): noteAdded(new)
                case .changed(let new): noteChanged(new)
                case .restamped(let new): noteRestamped(new)
                case .replaced(let old, let new):
                    noteRemoved(old)
                    noteAdded(new)
                case nil: break
                }
            }
            for (path, stamp) in later.foldersChanged { foldersChanged[path] = stamp }
            for (path, stamp) in later.accountedChanged { accountedChanged[path] = stamp }
        }

        /// The paths in ``order`` whose changes cancelled out (rare): noted again, they keep their place.
        private var cancelled = Set<String>()

        private mutating func set(_ state: State, at path: String) {
            states[path] = state
            if cancelled.remove(path) == nil { order.append(path) }
        }

        private mutating func clear(_ path: String) {
            states[path] = nil
            cancelled.insert(path)
        }
    }
}
