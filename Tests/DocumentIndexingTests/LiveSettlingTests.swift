@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A package a shell or a sync engine changes file by file reads incomplete or damaged while
/// it works: the live index publishes what it settles into, not each step.
@Suite("Live index: packages mid-change")
struct LiveSettlingTests {
    private func started(_ library: IndexTestLibrary) async throws -> (DocumentIndex, BatchCollector) {
        let index = try DocumentIndex(library.configuration(persistent: false))
        let collector = BatchCollector(index.updates())
        try #require(await collector.wait { $0.first?.kind == .gathered })
        return (index, collector)
    }

    private func pause() throws { usleep(40_000) }

    @Test("a package copied in member by member (manifest last) arrives once, as the document it becomes")
    func copiedInSlowly() async throws {
        let library = try IndexTestLibrary()
        let staging = try IndexTestLibrary()
        let id = try staging.writeNote("C.note", title: "C")
        let (index, collector) = try await started(library)
        try FileManager.default.createDirectory(atPath: library.path("C.note"), withIntermediateDirectories: false)
        try pause()
        try FileManager.default.copyItem(atPath: staging.path("C.note/body.txt"), toPath: library.path("C.note/body.txt"))
        try pause()
        try FileManager.default.copyItem(atPath: staging.path("C.note/Info.json"), toPath: library.path("C.note/Info.json"))
        #expect(await collector.wait { $0.updates.addedPaths == ["C.note"] })
        try await index.sync()
        let told = collector.batches.updates.flatMap { $0.added + $0.changed }.filter { $0.relativePath == "C.note" }
        #expect(told.map(\.state) == [.current], "\(told.map(describe))")
        #expect(told.first?.documentIdentifier == id)
        await index.close()
    }

    @Test("a package removed member by member (a slow rm -rf) arrives as a removal of the document it was")
    func removedSlowly() async throws {
        let library = try IndexTestLibrary()
        let id = try library.writeNote("A.note", title: "A")
        let (index, collector) = try await started(library)
        try FileManager.default.removeItem(atPath: library.path("A.note/Info.json"))
        try pause()
        try FileManager.default.removeItem(atPath: library.path("A.note/body.txt"))
        try pause()
        try FileManager.default.removeItem(atPath: library.path("A.note"))
        #expect(await collector.wait { $0.updates.removedPaths == ["A.note"] })
        try await index.sync()
        let updates = collector.batches.updates
        #expect(updates.flatMap(\.removed).map(\.documentIdentifier) == [id])
        #expect(updates.changedPaths.isEmpty, "\(updates.flatMap(\.changed).map(describe))")
        await index.close()
    }

    @Test("a manifest damaged in place and left so arrives as damaged once it settles, and the index shows it")
    func damagedAndLeft() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let (index, collector) = try await started(library)
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: library.path("A.note/Info.json")))
        #expect(await collector.wait { $0.updates.flatMap(\.changed).contains { $0.relativePath == "A.note" } })
        let told = collector.batches.updates.flatMap(\.changed).filter { $0.relativePath == "A.note" }
        guard told.count == 1, case .damaged? = told.first?.state else { Issue.record("\(told.map(describe))"); return }
        guard case .damaged? = await index.entry(atRelativePath: "A.note")?.state else { Issue.record("not damaged in the index"); return }
        await index.close()
    }

    @Test("sync() while a package is mid-change publishes it as it is on disk")
    func syncDoesNotWait() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let (index, collector) = try await started(library)
        try FileManager.default.removeItem(atPath: library.path("A.note/Info.json"))
        try await index.sync()
        let state = await index.entry(atRelativePath: "A.note")?.state
        #expect(state != .current && state != nil, "\(String(describing: state))")
        #expect(await collector.wait { $0.updates.changedPaths == ["A.note"] })
        await index.close()
    }
}
