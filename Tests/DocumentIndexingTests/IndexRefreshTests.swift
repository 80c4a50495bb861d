@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Index refresh")
struct IndexRefreshTests {
    @Test("refresh reports an added, a removed, a renamed (as a move) and an edited package")
    func refreshReportsChanges() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("Keep.note", title: "Keep")
        try library.writeNote("Gone.note", title: "Gone")
        let moving = try library.writeNote("Old.note", title: "Moving")
        try library.writeNote("Edit.note", title: "Before")
        let index = try DocumentIndex(library.configuration())
        #expect(await index.entries.count == 4)

        try FileManager.default.removeItem(atPath: library.path("Gone.note"))
        try library.writeNote("Fresh.note", title: "Fresh")
        try FileManager.default.createDirectory(atPath: library.path("Sub"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: library.path("Old.note"), toPath: library.path("Sub/New.note"))
        let editID = await index.entry(atRelativePath: "Edit.note")?.documentIdentifier
        try library.writeNote("Edit.note", title: "After", identifier: editID!)
        let batch = try await index.refresh()
        #expect(batch.added.map(\.relativePath) == ["Fresh.note"])
        #expect(batch.removed.map(\.relativePath) == ["Gone.note"])
        #expect(batch.moved.map { [$0.from.relativePath, $0.to.relativePath] } == [["Old.note", "Sub/New.note"]])
        #expect(batch.moved.first?.to.documentIdentifier == moving)
        #expect(batch.changed.map(\.relativePath) == ["Edit.note"])
        #expect(batch.changed.first?.key == "After")
        #expect(try await index.refresh().isEmpty)
    }

    @Test("refresh catches a member removed from a package (incomplete) and put back (current)")
    func memberRemovedAndBack() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A", body: "hello")
        let index = try DocumentIndex(library.configuration())
        #expect(await index.entries.first?.state == .current)
        try FileManager.default.removeItem(atPath: library.path("A.note/body.txt"))
        let batch = try await index.refresh()
        guard case .incomplete? = batch.changed.first?.state else { Issue.record("\(batch.changed)"); return }
        try Data("hello".utf8).write(to: URL(fileURLWithPath: library.path("A.note/body.txt")))
        #expect(try await index.refresh().changed.first?.state == .current)
    }
}

@Suite("Index conflict state")
struct IndexConflictStateTests {
    @Test("a new process's refresh sees a conflict version kept since, whatever the case of the UUID or the form of the identifier")
    func conflictSeenByNewProcess() async throws {
        let library = try IndexTestLibrary()
        let identifiers = [UUID().uuidString, UUID().uuidString.lowercased(), "not-a-uuid", "with space/slash"]
        for (n, identifier) in identifiers.enumerated() { try library.writeNote("N\(n).note", title: "N\(n)", identifier: identifier) }
        for n in 0..<3 { try library.writeNote("Other\(n).note", title: "Other \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        let store = VersionStore(libraryURL: library.url)
        for n in identifiers.indices {
            _ = try store.keepConflictingVersion(ofItemAt: library.url.appendingPathComponent("N\(n).note", isDirectory: true), ancestorDigest: nil)
        }
        let index = try DocumentIndex(library.configuration())
        let batch = try await index.refresh()
        #expect(batch.changed.map(\.relativePath).sorted() == identifiers.indices.map { "N\($0).note" })
        for n in identifiers.indices { #expect(await index.entry(atRelativePath: "N\(n).note")?.state == .unresolvedConflicts(1)) }
        for n in 0..<3 { #expect(await index.entry(atRelativePath: "Other\(n).note")?.state == .current) }
    }

    @Test("a version added to the store (after the document was replaced, as a save by exchange does) is no change to tell; the index still learns its stamp")
    func aVersionAloneIsNoChange() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A", identifier: UUID().uuidString)
        let index = try DocumentIndex(library.configuration())
        try await index.refresh()
        _ = try VersionStore(libraryURL: library.url).addVersion(ofItemAt: library.url.appendingPathComponent("A.note", isDirectory: true))
        let batch = try await index.refresh()
        #expect(batch.changed.isEmpty && batch.added.isEmpty && batch.removed.isEmpty, "\(batch.changed.map(\.relativePath))")
        #expect(await index.entry(atRelativePath: "A.note")?.state == .current)
        // Learnt: the next refresh does not read the document again.
        let again = try await index.refresh()
        #expect(again.changed.isEmpty)
    }

    @Test("a document with an unresolved conflict version in the library's store shows the count; a removed one clears it")
    func unresolvedConflicts() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        try library.writeNote("B.note", title: "B")
        let index = try DocumentIndex(library.configuration())
        #expect(await index.entries.map(\.state) == [.current, .current])
        let store = VersionStore(libraryURL: library.url)
        let item = library.url.appendingPathComponent("A.note", isDirectory: true)
        let version = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        let batch = try await index.refresh()
        #expect(batch.changed.map(\.relativePath) == ["A.note"])
        #expect(await index.entry(atRelativePath: "A.note")?.state == .unresolvedConflicts(1))
        #expect(await index.entry(atRelativePath: "B.note")?.state == .current)
        // A new process knows it from the persisted index.
        #expect(await (try DocumentIndex(library.configuration())).entries(forKey: "A").first?.state == .unresolvedConflicts(1))
        // Resolved: its record is rewritten in the store, and the document is current again.
        _ = try store.markResolved(version, as: .keptCurrent)
        try await index.refresh()
        #expect(await index.entry(atRelativePath: "A.note")?.state == .current)
        let second = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        try await index.refresh()
        #expect(await index.entry(atRelativePath: "A.note")?.state == .unresolvedConflicts(1))
        try store.remove(second, evenIfUnresolvedConflict: true)
        try await index.refresh()
        #expect(await index.entry(atRelativePath: "A.note")?.state == .current)
    }
}
