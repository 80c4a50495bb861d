@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// What the index's cost depends on, counted in system calls and loaded rows (the times are in
/// `Benchmarks/README.md`, never in tests).
@Suite("Index scale")
struct IndexScaleTests {
    static func statCount(_ injector: FaultInjector) -> Int { injector.trace.filter { $0.call == .status }.count }

    /// Replaces the package at `path` as an atomic save does: a new folder (new inode) at the old name.
    static func swap(_ path: String, in library: IndexTestLibrary, title: String) async throws {
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        let identifier = try #require(await fresh.entry(atRelativePath: path)?.documentIdentifier)
        try library.writeNote(".swap.note", title: title, identifier: identifier)
        try FileManager.default.moveItem(atPath: library.path(path), toPath: library.path(".old.note"))
        try FileManager.default.moveItem(atPath: library.path(".swap.note"), toPath: library.path(path))
        try FileManager.default.removeItem(atPath: library.path(".old.note"))
    }

    @Test("a new process's refresh of 200 documents, one changed, reads one manifest and stats each entry at most twice")
    func startUpStatsEachEntryAtMostTwice() async throws {
        let library = try IndexTestLibrary()
        let count = 200
        for n in 0..<count { try library.writeNote("N\(n).note", title: "Note \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        let first = try DocumentIndex(library.configuration())
        let id = try #require(await first.entries(forKey: "Note 7").first?.documentIdentifier)
        try library.writeNote("N7.note", title: "Changed", identifier: id)

        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        let batch = try await index.refresh()
        #expect(batch.changed.map(\.relativePath) == ["N7.note"])
        #expect(IndexPersistenceTests.manifestOpens(injector) == 1)
        // The package and its manifest per entry; a few more for the library, the store and the one re-read.
        #expect(Self.statCount(injector) <= 2 * count + 10, "\(Self.statCount(injector)) stats for \(count) entries")
    }

    @Test("an index built and refreshed in a new process over more documents than one thread reads (spread over the cores) finds exactly what changed")
    func startUpWithConcurrentStats() async throws {
        let library = try IndexTestLibrary()
        let count = EntryReader.concurrentThreshold + 300
        for n in 0..<count { try library.writeNote("N\(n).note", title: "Note \(n)") }
        // Built from nothing: every package read, over the cores, each entry its own.
        let built = try await DocumentIndex(library.configuration()).refresh()
        #expect(built.added.count == count)
        #expect(built.added.allSatisfy { $0.key == "Note " + $0.relativePath.dropFirst().dropLast(5) && $0.state == .current })
        let first = try DocumentIndex(library.configuration())
        let edited = try #require(await first.entries(forKey: "Note 7").first?.documentIdentifier)
        try library.writeNote("N7.note", title: "Edited", identifier: edited)
        try await Self.swap("N1500.note", in: library, title: "Swapped")
        try FileManager.default.removeItem(atPath: library.path("N2200.note/body.txt"))
        try FileManager.default.removeItem(atPath: library.path("N\(count - 1).note"))

        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        let batch = try await index.refresh()
        #expect(batch.changed.map(\.relativePath).sorted() == ["N1500.note", "N2200.note", "N7.note"])
        #expect(batch.removed.map(\.relativePath) == ["N\(count - 1).note"])
        #expect(batch.added.isEmpty)
        #expect(await index.entry(atRelativePath: "N1500.note")?.key == "Swapped")
        guard case .incomplete? = await index.entry(atRelativePath: "N2200.note")?.state else { Issue.record("N2200 not incomplete"); return }
        // The listing's stamp of each package, its manifest's; a few more for the library, the store and each re-read.
        #expect(Self.statCount(injector) <= 2 * count + 20, "\(Self.statCount(injector)) stats for \(count) entries")
        let fresh = try await library.configuration(persistent: false).freshScan()
        #expect(await index.entries == fresh)
    }

    @Test("refreshListing after another process swapped one package of a flat library reads one manifest and loads no other row")
    func listingAfterSwapLoadsOneRow() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<50 { try library.writeNote("N\(n).note", title: "Note \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        try await Self.swap("N8.note", in: library, title: "Swapped")

        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        let batch = try await index.refreshListing()
        #expect(batch.changed.map(\.relativePath) == ["N8.note"])
        #expect(batch.added.isEmpty && batch.removed.isEmpty && batch.moved.isEmpty)
        #expect(IndexPersistenceTests.manifestOpens(injector) == 1)
        #expect(await index.snapshot.records.count == 1)
        #expect(await index.entries(forKey: "Swapped").map(\.relativePath) == ["N8.note"])
        // A package removed meanwhile is found gone, its row loaded to say what it was.
        try FileManager.default.removeItem(atPath: library.path("N9.note"))
        let removal = try await index.refreshListing()
        #expect(removal.removed.map(\.key) == ["Note 9"])
    }

    /// The calls a new process makes to look up "Note 0" by key and revalidate it, in a library of `count` notes.
    static func lookupCalls(count: Int) async throws -> [FaultInjector.Call] {
        let library = try IndexTestLibrary()
        for n in 0..<count { try library.writeNote("N\(n).note", title: "Note \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        let hit = try #require(await index.entries(forKey: "Note 0").first)
        #expect(await index.revalidate(relativePath: hit.relativePath)?.key == "Note 0")
        return injector.trace
    }

    @Test("a lookup by key and a revalidation of the hit in a new process make the same calls in 1 and 60 documents: no listing, no manifest read")
    func lookupThenRevalidate() async throws {
        let one = try await Self.lookupCalls(count: 1)
        let many = try await Self.lookupCalls(count: 60)
        #expect(one.map(\.call) == many.map(\.call))
        #expect(!many.contains { $0.call == .listDirectory || ($0.call == .open && $0.name == "Info.json") })
    }

    @Test("an index rebuilt while live sends one reset batch with every entry, under a new index identifier")
    func rebuildWhileLiveResets() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<30 { try library.writeNote("N\(n).note", title: "Note \(n)") }
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        let gathered = try #require(collector.batches.first)

        struct Spoiled: Error {}
        await index.databaseFailed(Spoiled())
        try library.writeNote("Later.note", title: "Later")
        try await index.sync()
        #expect(await collector.wait { $0.addedPaths.contains("Later.note") })
        let after = Array(collector.batches.dropFirst())
        #expect(after.first?.kind == .reset)
        #expect(after.filter { $0.kind == .reset }.count == 1)
        let reset = try #require(after.first { $0.kind == .reset })
        let rebuiltID = await index.indexID
        #expect(reset.indexID != gathered.indexID && reset.indexID == rebuiltID)
        #expect(reset.added.map(\.relativePath) == gathered.added.map(\.relativePath))
        #expect(reset.sequence > gathered.sequence)
        // A new process finds the rebuilt index under the same identifier.
        #expect(await (try DocumentIndex(library.configuration())).indexID == rebuiltID)
        await index.close()
    }
}
