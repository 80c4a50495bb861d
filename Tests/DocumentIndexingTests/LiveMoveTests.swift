import DocumentKit
import DocumentKitSystem
import DocumentKitTesting
@testable import DocumentIndexing
import Foundation
import Synchronization
import Testing

@Suite("Live index: moves seen in two halves")
struct LiveMoveTests {
    /// `mv A.note Sub/` (or back) while the index walks the library for another change: the
    /// library folder is listed, then the move, then the subfolder is listed. Moved in, the note
    /// is seen at both paths; moved out, at neither. The move's events come after that look.
    @Test(
        "a note moved between the listings of its old folder and its new one is one batch's move",
        arguments: [("A.note", "Sub/A.note"), ("Sub/A.note", "A.note")])
    func moveBetweenTwoListings(from source: String, to destination: String) async throws {
        let library = try IndexTestLibrary()
        let identifier = try library.writeNote(source, title: "A")
        try library.writeNote("B.note", title: "B")
        try FileManager.default.createDirectory(atPath: library.path("Sub"), withIntermediateDirectories: true)
        let from = library.path(source), to = library.path(destination)
        let libraryPath = library.url.standardizedFileURL.path
        let subPath = libraryPath + "/Sub"
        let armed = Atomic(false)
        let libraryListed = Atomic(false)
        let moved = Atomic(false)
        let fileSystem = FileSystem(interceptor: { call, name in
            guard armed.load(ordering: .relaxed) else { return nil }
            if call == .listDirectory, name == libraryPath { libraryListed.store(true, ordering: .relaxed) }
            if call == .status, name == subPath, libraryListed.load(ordering: .relaxed),
                moved.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
            {
                rename(from, to)
            }
            return nil
        })
        let index = try DocumentIndex(library.configuration(fileSystem: fileSystem))
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        // Something that is not a package, made in the library folder: its event has the folder listed.
        armed.store(true, ordering: .relaxed)
        try Data("x".utf8).write(to: library.url.appendingPathComponent("notes.txt"))
        #expect(await collector.wait { !$0.updates.flatMap(\.moved).isEmpty || !$0.updates.removedPaths.isEmpty })
        try await index.sync()
        let renamed = moved.load(ordering: .relaxed)
        #expect(renamed, "the subfolder was not checked after a listing of the library folder")

        let updates = collector.batches.updates
        let moves = updates.flatMap(\.moved).map { "\($0.from.relativePath) → \($0.to.relativePath)" }
        #expect(moves == ["\(source) → \(destination)"], "batches: \(updates.map { "+\($0.added.map(\.relativePath)) -\($0.removed.map(\.relativePath)) ~\($0.moved.map(\.to.relativePath))" })")
        #expect(updates.addedPaths.isEmpty && updates.removedPaths.isEmpty)
        #expect(await index.entries(withDocumentIdentifier: identifier).map(\.relativePath) == [destination])
        #expect(summary(await index.entries) == summary(try await library.configuration().freshScan()))
        await index.close()
    }

    @Test("a note copied into a folder made just before keeps its original: an add, no removal")
    func copyIntoANewFolder() async throws {
        let library = try IndexTestLibrary()
        let identifier = try library.writeNote("A.note", title: "A")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        try FileManager.default.createDirectory(atPath: library.path("Sub"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: library.path("A.note"), toPath: library.path("Sub/A.note"))
        try await index.sync()
        // sync() returns once the batch is published; the collector's task may still be taking it.
        _ = await collector.wait { $0.updates.addedPaths == ["Sub/A.note"] }
        #expect(collector.batches.updates.removedPaths.isEmpty)
        #expect(collector.batches.updates.flatMap(\.moved).isEmpty)
        #expect(collector.batches.updates.addedPaths == ["Sub/A.note"])
        #expect(await index.entries(withDocumentIdentifier: identifier).map(\.relativePath) == ["A.note", "Sub/A.note"])
        await index.close()
    }

    @Test("a batch: the same document gone and back at one path is a change; two copies removed and one added pair once")
    func batchPairing() throws {
        let library = URL(fileURLWithPath: "/library")
        func record(_ path: String, _ identifier: String, key: String) -> EntryRecord {
            let entry = IndexEntry(
                libraryURL: library, relativePath: path, documentIdentifier: identifier, formatIdentifier: nil, formatVersion: nil,
                key: key, fields: [:], modificationDate: nil, state: .current)
            return EntryRecord(entry: entry, package: .none, manifest: nil, conflicts: nil)
        }
        let a = UUID().uuidString, b = UUID().uuidString
        let changes = IndexSnapshot.Changes(
            removed: [record("A.note", a, key: "A"), record("copy.note", b, key: "B"), record("B.note", b, key: "B")],
            added: [record("A.note", a, key: "A again"), record("moved/B.note", b, key: "B")])
        let batch = changes.batch(indexID: UUID(), sequence: 1)
        #expect(batch.changed.map(\.relativePath) == ["A.note"])
        #expect(batch.changed.first?.key == "A again")
        #expect(batch.moved.map { "\($0.from.relativePath) → \($0.to.relativePath)" } == ["copy.note → moved/B.note"])
        #expect(batch.removed.map(\.relativePath) == ["B.note"])
        #expect(batch.added.isEmpty)

        // A different document at the same path: a removal and an add.
        let other = IndexSnapshot.Changes(removed: [record("A.note", a, key: "A")], added: [record("A.note", b, key: "Another")])
        let replaced = other.batch(indexID: UUID(), sequence: 2)
        #expect(replaced.removed.map(\.documentIdentifier) == [a] && replaced.added.map(\.documentIdentifier) == [b])
        #expect(replaced.changed.isEmpty && replaced.moved.isEmpty)
    }
}
