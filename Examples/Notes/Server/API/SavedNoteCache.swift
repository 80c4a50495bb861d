import DocumentKit
import Foundation
import Synchronization

/// The notes this server saved last, kept open for their next write: a `PUT` after a `PUT` of
/// the same note changes the document it saved, instead of reading the note again.
///
/// A document is taken back only while its package on disk is what its save left there, as
/// ``ItemState`` with its members tells (the package folder's identity, change time included, and
/// each member's device, inode, size and modification time), and while the version store holds no
/// unresolved conflict of the note (one can reach the store alone: an adopted sibling copy).
/// Anything else another process does to the note (an attachment added, a member written in
/// place, the note saved, renamed away and back) makes the next write read the note again. A
/// document is taken out while a write uses it and kept again only after that write, under the
/// same coordinated write of the note: two writes never share a document.
///
/// What this can't see: a member rewritten in place at the same size within one tick of the file
/// system's clock after the save (or with its modification time put back), and a write by a
/// program that doesn't coordinate landing between the save and the state taken after it. The
/// next write then saves over it without reading it; the package it replaces is kept in the
/// version store as every save keeps it (a version, not a conflict). A ``Document`` kept open
/// has the same window between its save and its new base.
///
/// A document is read again after ``reuseLimit`` writes: each change it takes is remembered for
/// undo counting (``Document/update(as:_:)``), which a document kept for months would grow.
final class SavedNoteCache: Sendable {
    private struct Entry {
        let document: NoteDocument
        let state: ItemState
        let uses: Int
    }

    private struct State {
        var entries = KeptInOrder<Entry>()
        var reused = 0
    }

    private let state = Mutex(State())
    /// At most this many documents are kept (oldest kept first out).
    let capacity: Int
    /// How many writes one document serves before the note is read again.
    let reuseLimit: Int

    init(capacity: Int = 64, reuseLimit: Int = 1000) {
        self.capacity = capacity
        self.reuseLimit = reuseLimit
    }

    /// The document saved at `place` and how many writes it served, taken out of the cache, if
    /// the package there is still the one its save left and `accepting` accepts it; nil otherwise
    /// (the document is dropped).
    func take(at place: URL, accepting: (NoteDocument) -> Bool = { _ in true }) -> (document: NoteDocument, uses: Int)? {
        let path = place.standardizedFileURL.path
        guard let entry = state.withLock({ $0.entries.remove(path) }) else { return nil }
        guard let now = ItemState.ofItem(at: place, includingMembers: true), entry.state.identity.isUnchanged(comparedTo: now.identity),
            entry.state.members == now.members, accepting(entry.document)
        else { return nil }
        state.withLock { $0.reused += 1 }
        return (entry.document, entry.uses)
    }

    /// Keeps `document`, just saved at `place` under a coordinated write of the note, for the
    /// note's next write (`uses`: the writes it served before this one); a document with unsaved
    /// changes or in conflict is not kept, nor one that served ``reuseLimit`` writes.
    func keep(_ document: NoteDocument, uses: Int, at place: URL) {
        guard uses < reuseLimit, !document.hasUnsavedChanges, document.documentState.isDisjoint(with: [.inConflict, .closed]),
            let saved = ItemState.ofItem(at: place, includingMembers: true)
        else { return }
        let path = place.standardizedFileURL.path
        state.withLock { state in
            state.entries.keep(Entry(document: document, state: saved, uses: uses + 1), for: path)
            while state.entries.count > capacity, state.entries.removeOldest() != nil {}
        }
    }

    /// Forgets every document (at shutdown).
    func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// How many documents are kept now.
    var count: Int { state.withLock { $0.entries.count } }
    /// How many writes took a kept document (for tests and diagnostics).
    var reusedCount: Int { state.withLock { $0.reused } }
}
