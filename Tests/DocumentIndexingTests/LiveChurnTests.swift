import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The index against the real world: a live index on a notes library while real `notes`
/// processes and shell commands change it, several at once. Afterwards the index equals a fresh
/// scan entry by entry, and the batches it delivered add up to the difference.
@Suite("Live index under churn", .timeLimit(.minutes(2)))
struct LiveChurnTests {
    /// With every package watched, and with none (past the watch budget: the folder watches and the sweep).
    @Test(
        "under churn by notes processes and shell mv, rm -rf, cp -a and mkdir, the live index ends equal to a fresh scan and its batches add up to the difference",
        arguments: [4096, 0])
    func churn(packageWatchBudget: Int) async throws {
        let library = try TemporaryDirectory(prefix: "live-churn")
        let cache = try TemporaryDirectory(prefix: "live-churn-cache")
        let notes = LiveNotes(library: library.url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<3 {
                group.addTask {
                    for number in stride(from: lane + 1, through: 9, by: 3) {
                        try await notes.ok(["new", "Note \(number)", "--body", "Body \(number)."])
                    }
                }
            }
            try await group.waitForAll()
        }
        var configuration = LiveNotes.indexConfiguration(of: library.url, cache: cache.url)
        configuration.packageWatchBudget = packageWatchBudget
        let index = try DocumentIndex(configuration)
        let (mirror, consumer) = LiveMirror.following(index.updates())
        defer { consumer.cancel() }
        let gathered = await waitUntil { await mirror.hasGathered }
        try #require(gathered, "no gathering batch")
        let before = await mirror.entries
        #expect(before.keys.sorted() == (1...9).map { "note-\($0).note" }, "\(before.keys.sorted())")
        #expect(before.values.allSatisfy { $0.state == .current }, "\(before.values.map(describe))")
        func identifier(_ number: Int) throws -> String {
            try #require(before["note-\(number).note"]?.documentIdentifier)
        }

        // Three writers at once, on distinct notes: notes processes, and the shell.
        async let notesA: Void = {
            try await notes.ok(["new", "Fresh 1", "--body", "new"])
            try await notes.ok(["edit", "Note 1", "--append", "one more line"])
            try await notes.ok(["new", "Fresh 2", "--tag", "churn"])
            try await notes.ok(["edit", "Note 3", "--tag", "churn"])
            try await notes.ok(["new", "Fresh 3"])
        }()
        async let notesB: Void = {
            try await notes.ok(["mv", "Note 2", "Renamed 2"])
            try await notes.ok(["edit", "Note 8", "--append", "an appended line"])
            try await notes.ok(["rm", "Note 9"])
        }()
        async let shellC: Void = {
            try await shell("mv note-4.note Moved-4.note", in: library.url)
            try await shell("rm -rf note-5.note", in: library.url)
            try await shell("cp -a note-6.note copy-6.note", in: library.url)
            try await shell("mkdir -p sub/dir && mv note-7.note sub/dir/", in: library.url)
        }()
        _ = try await (notesA, notesB, shellC)

        // The live index catches up by itself (its watcher, else its periodic sweep)...
        let fresh = try await configuration.freshScan()
        let converged = await waitUntil(deadline: .seconds(20)) { differences(await mirror.entries, byPath(fresh), "live", "fresh").isEmpty }
        let unconverged = differences(await mirror.entries, byPath(fresh), "live", "fresh")
        #expect(converged, "the delivered batches did not reach the disk's state without sync(): \(unconverged)")

        // ...and after sync() its entries are a fresh scan's, and so is what its batches add up to.
        try await index.sync()
        let entries = await index.entries
        let sequence = await index.sequence
        #expect(differences(entries, fresh, "index", "fresh") == [])
        let delivered = await waitUntil { await mirror.lastSequence == sequence }
        let lastDelivered = await mirror.lastSequence
        #expect(delivered, "the last batch delivered is \(String(describing: lastDelivered)), the index is at \(sequence)")
        let mirrored = await mirror.entries
        #expect(differences(mirrored, byPath(fresh), "batches", "fresh") == [])
        #expect(await mirror.inconsistencies == [])
        let ending = await mirror.ending
        #expect(ending == nil, "the updates ended: \(ending ?? "")")

        // What the batches said of each change.
        let updates = await mirror.updateBatches
        let added = updates.flatMap(\.added)
        let removed = updates.flatMap(\.removed)
        let moves = updates.flatMap(\.moved)
        for (number, destination) in [(4, "Moved-4.note"), (7, "sub/dir/note-7.note"), (2, "renamed-2.note")] {
            let id = try identifier(number)
            #expect(
                moves.contains { $0.from.relativePath == "note-\(number).note" && $0.to.relativePath == destination },
                "note-\(number).note → \(destination) was not delivered as a move: moves \(moves.map { "\($0.from.relativePath) → \($0.to.relativePath)" })")
            #expect(!added.contains { $0.documentIdentifier == id }, "the moved note-\(number) was delivered as added")
            #expect(!removed.contains { $0.documentIdentifier == id }, "the moved note-\(number) was delivered as removed")
        }
        #expect(entries.first { $0.relativePath == "renamed-2.note" }?.key == "Renamed 2")
        for number in [5, 9] {
            let id = try identifier(number)
            let path = "note-\(number).note"
            let told: [String] = updates.map { batch in
                let entries: [IndexEntry] = batch.added + batch.changed + batch.removed
                return entries.filter { $0.relativePath == path }.map(describe).joined(separator: ", ")
            }
            #expect(
                removed.contains { $0.relativePath == path && $0.documentIdentifier == id },
                "\(path) was not delivered as removed with its identifier: batches \(told)")
            #expect(!entries.contains { $0.documentIdentifier == id })
        }
        // A copy is an add of a duplicate identifier; the original stays.
        let copied = try identifier(6)
        #expect(added.contains { $0.relativePath == "copy-6.note" && $0.documentIdentifier == copied })
        #expect(await index.entries(withDocumentIdentifier: copied).map(\.relativePath) == ["copy-6.note", "note-6.note"])
        for title in ["Fresh 1", "Fresh 2", "Fresh 3"] {
            #expect(added.contains { $0.key == title }, "“\(title)” was not delivered as added")
        }
        #expect(entries.first { $0.key == "Note 3" }?.fields["tags"]?.jsonText.contains("churn") == true)
        #expect(entries.allSatisfy { $0.state == .current }, "\(entries.map(describe))")
        await index.close()
    }
}
