@testable import DocumentIndexing
import Foundation
import Testing

@Suite("Index changes: the net effect on each path")
struct IndexChangesTests {
    static let library = URL(fileURLWithPath: "/library")
    static let a = UUID().uuidString

    static func record(_ path: String, key: String, identifier: String = a) -> EntryRecord {
        let entry = IndexEntry(
            libraryURL: library, relativePath: path, documentIdentifier: identifier, formatIdentifier: nil, formatVersion: nil,
            key: key, fields: [:], modificationDate: nil, state: .current)
        return EntryRecord(entry: entry, package: .none, manifest: nil, conflicts: nil)
    }

    /// The paths and keys a reader that knew `before` holds after the batch.
    static func applied(_ changes: IndexSnapshot.Changes, to before: [String: String]) -> [String: String] {
        let batch = changes.batch(indexID: UUID(), sequence: 1)
        var view = before
        for entry in batch.removed { view[entry.relativePath] = nil }
        for move in batch.moved {
            view[move.from.relativePath] = nil
            view[move.to.relativePath] = move.to.key
        }
        for entry in batch.added + batch.changed { view[entry.relativePath] = entry.key }
        return view
    }

    @Test("a document read changed and then found gone (a shell's rm -rf part-way) is a removal, not a change")
    func changedThenRemoved() {
        var changes = IndexSnapshot.Changes()
        changes.noteChanged(Self.record("A.note", key: "A half removed"))
        var later = IndexSnapshot.Changes()
        later.noteRemoved(Self.record("A.note", key: "A half removed"))
        changes.merge(later)
        #expect(changes.changed.isEmpty && changes.added.isEmpty)
        #expect(changes.removed.map(\.relativePath) == ["A.note"])
        #expect(Self.applied(changes, to: ["A.note": "A", "B.note": "B"]) == ["B.note": "B"])
    }

    @Test("a document found new and gone again in one batch is not told at all")
    func addedThenRemoved() {
        var changes = IndexSnapshot.Changes()
        changes.noteAdded(Self.record("New.note", key: "New"))
        changes.noteRemoved(Self.record("New.note", key: "New"))
        #expect(changes.removed.isEmpty && changes.added.isEmpty && changes.changed.isEmpty)
        #expect(Self.applied(changes, to: ["B.note": "B"]) == ["B.note": "B"])
    }

    @Test("gone, back and gone again is one removal of what it was; gone, back and changed is a change to its latest")
    func goneAndBack() {
        var gone = IndexSnapshot.Changes()
        gone.noteRemoved(Self.record("A.note", key: "A"))
        gone.noteAdded(Self.record("A.note", key: "A back"))
        gone.noteRemoved(Self.record("A.note", key: "A back"))
        #expect(gone.removed.map(\.entry.key) == ["A"] && gone.added.isEmpty)
        #expect(Self.applied(gone, to: ["A.note": "A"]) == [:])

        var back = IndexSnapshot.Changes()
        back.noteRemoved(Self.record("A.note", key: "A"))
        back.noteAdded(Self.record("A.note", key: "A back"))
        back.noteChanged(Self.record("A.note", key: "A latest"))
        #expect(back.added.map(\.entry.key) == ["A latest"] && back.changed.isEmpty)
        #expect(Self.applied(back, to: ["A.note": "A"]) == ["A.note": "A latest"])
    }

    @Test("a document added and then changed is added as it is now; changed twice is its latest change")
    func latestWins() {
        var changes = IndexSnapshot.Changes()
        changes.noteAdded(Self.record("New.note", key: "first"))
        changes.noteChanged(Self.record("New.note", key: "second"))
        changes.noteChanged(Self.record("B.note", key: "B1"))
        changes.noteChanged(Self.record("B.note", key: "B2"))
        #expect(changes.added.map(\.entry.key) == ["second"])
        #expect(changes.changed.map(\.entry.key) == ["B2"])
        #expect(Self.applied(changes, to: ["B.note": "B"]) == ["New.note": "second", "B.note": "B2"])
    }

    @Test("a document gone and then read changed at its path (back) is gone and back: a reader gets its latest record")
    func removedThenChanged() {
        var changes = IndexSnapshot.Changes()
        changes.noteRemoved(Self.record("A.note", key: "A"))
        changes.noteChanged(Self.record("A.note", key: "A back"))
        #expect(changes.removed.map(\.entry.key) == ["A"] && changes.added.map(\.entry.key) == ["A back"])
        #expect(changes.changed.isEmpty)
        #expect(Self.applied(changes, to: ["A.note": "A"]) == ["A.note": "A back"])
        let batch = changes.batch(indexID: UUID(), sequence: 1)
        #expect(batch.removed.isEmpty && batch.added.isEmpty && batch.changed.map(\.key) == ["A back"])
    }

    @Test("a path new, gone, new, gone and new again within one batch is one addition")
    func cancelledAndNotedAgain() {
        var changes = IndexSnapshot.Changes()
        for round in 0..<3 {
            changes.noteAdded(Self.record("New.note", key: "New \(round)"))
            if round < 2 { changes.noteRemoved(Self.record("New.note", key: "New \(round)")) }
        }
        #expect(changes.added.map(\.entry.key) == ["New 2"] && changes.removed.isEmpty && changes.changed.isEmpty)
        var later = IndexSnapshot.Changes()
        later.noteRemoved(Self.record("B.note", key: "B"))
        later.noteAdded(Self.record("B.note", key: "B back"))
        changes.merge(later)
        #expect(changes.removed.map(\.entry.key) == ["B"] && changes.added.map(\.entry.key) == ["New 2", "B back"])
        #expect(Self.applied(changes, to: ["B.note": "B"]) == ["New.note": "New 2", "B.note": "B back"])
    }

    @Test("merged changes compose path by path, whatever the order each look saw them in")
    func mergesCompose() {
        var first = IndexSnapshot.Changes()
        first.noteAdded(Self.record("New.note", key: "New"))
        first.noteChanged(Self.record("B.note", key: "B1"))
        first.noteRemoved(Self.record("C.note", key: "C"))
        var second = IndexSnapshot.Changes()
        second.noteRemoved(Self.record("New.note", key: "New"))
        second.noteRemoved(Self.record("B.note", key: "B1"))
        second.noteAdded(Self.record("C.note", key: "C back"))
        second.noteAdded(Self.record("D.note", key: "D"))
        first.merge(second)
        #expect(Self.applied(first, to: ["B.note": "B", "C.note": "C"]) == ["C.note": "C back", "D.note": "D"])
        #expect(first.removed.map(\.relativePath) == ["B.note", "C.note"])
        #expect(first.added.map(\.relativePath) == ["C.note", "D.note"])
    }

    @Test("withdrawing a held-back path keeps its removal and forgets its addition")
    func withdraw() {
        var changes = IndexSnapshot.Changes()
        changes.noteRemoved(Self.record("A.note", key: "A"))
        changes.noteAdded(Self.record("A.note", key: "A half copied"))
        changes.noteAdded(Self.record("C.note", key: "C half copied"))
        changes.withdraw(["A.note", "C.note"])
        #expect(changes.removed.map(\.relativePath) == ["A.note"] && changes.added.isEmpty)
        // Seen again later, C is new: the withdrawal forgot it.
        changes.noteAdded(Self.record("C.note", key: "C"))
        #expect(changes.added.map(\.entry.key) == ["C"])
    }

    @Test("a document whose stamps alone changed is recorded, not told; a later removal or change of it is told")
    func restampedAloneThenRemovedOrChanged() {
        var alone = IndexSnapshot.Changes()
        alone.noteRestamped(Self.record("A.note", key: "A"))
        #expect(alone.restamped.map(\.relativePath) == ["A.note"])
        #expect(alone.added.isEmpty && alone.changed.isEmpty && alone.removed.isEmpty)
        #expect(Self.applied(alone, to: ["A.note": "A"]) == ["A.note": "A"])

        var removed = IndexSnapshot.Changes()
        removed.noteRestamped(Self.record("A.note", key: "A"))
        var later = IndexSnapshot.Changes()
        later.noteRemoved(Self.record("A.note", key: "A"))
        removed.merge(later)
        #expect(removed.restamped.isEmpty && removed.removed.map(\.relativePath) == ["A.note"])
        #expect(Self.applied(removed, to: ["A.note": "A", "B.note": "B"]) == ["B.note": "B"])

        var changed = IndexSnapshot.Changes()
        changed.noteRestamped(Self.record("A.note", key: "A"))
        changed.noteChanged(Self.record("A.note", key: "A edited"))
        #expect(changed.restamped.isEmpty && changed.changed.map(\.key) == ["A edited"])
        #expect(Self.applied(changed, to: ["A.note": "A"]) == ["A.note": "A edited"])
    }

    @Test("a change then a restamp is still the change, as the document is now; gone then restamped is gone and back")
    func changedOrRemovedThenRestamped() {
        var changed = IndexSnapshot.Changes()
        changed.noteChanged(Self.record("A.note", key: "A edited"))
        var later = IndexSnapshot.Changes()
        later.noteRestamped(Self.record("A.note", key: "A edited"))
        changed.merge(later)
        #expect(changed.restamped.isEmpty && changed.changed.map(\.key) == ["A edited"])
        #expect(Self.applied(changed, to: ["A.note": "A"]) == ["A.note": "A edited"])

        var back = IndexSnapshot.Changes()
        back.noteRemoved(Self.record("A.note", key: "A"))
        back.noteRestamped(Self.record("A.note", key: "A back"))
        #expect(back.restamped.isEmpty)
        #expect(Self.applied(back, to: ["A.note": "A"]) == ["A.note": "A back"])
    }
}
