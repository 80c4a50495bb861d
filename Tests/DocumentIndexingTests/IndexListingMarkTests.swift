@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import GRDB
import Testing

/// `markListing(forChangesAt:)` + `noteChanges(at:since:)`: this process's own change to a
/// library folder keeps the index's listing current; anyone else's makes the next look list it.
@Suite("Index listing kept across this process's changes")
struct IndexListingMarkTests {
    /// A library of three notes whose index is built and persisted.
    private func builtLibrary() async throws -> IndexTestLibrary {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        try library.writeNote("B.note", title: "B")
        try library.writeNote("C.note", title: "C")
        try await DocumentIndex(library.configuration()).refresh()
        return library
    }

    /// Replaces the package at `path` by a new folder, as a save's swap does: the library folder
    /// changes, its number of subfolders doesn't.
    private func swap(_ library: IndexTestLibrary, _ path: String, title: String) throws {
        let identifier = UUID().uuidString
        try library.writeNote(".saving-" + path, title: title, identifier: identifier)
        try FileManager.default.removeItem(atPath: library.path(path))
        try FileManager.default.moveItem(atPath: library.path(".saving-" + path), toPath: library.path(path))
    }

    /// A new process's `refreshListing()`: whether it read the library folder's names.
    private func listsLibrary(_ library: IndexTestLibrary) async throws -> (listed: Bool, index: DocumentIndex) {
        let faults = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: faults.fileSystem))
        try await index.refreshListing()
        let listed = faults.trace.contains { $0.call == .listDirectory && $0.name == library.url.standardizedFileURL.path }
        return (listed, index)
    }

    @Test("a save noted with its mark: the next process finds the library listed, and the saved entry as it is now")
    func ownSaveKeepsListing() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        try await index.refreshListing()
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        await index.noteChanges(at: ["B.note"], since: mark)

        let (listed, next) = try await listsLibrary(library)
        #expect(!listed)
        #expect(await next.entries(forKey: "B2").map(\.relativePath) == ["B.note"])
        #expect(await next.entries(forKey: "B").isEmpty)
    }

    @Test("without a mark the next process lists the library again")
    func noMarkLists() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        try swap(library, "B.note", title: "B2")
        await index.noteChanges(at: ["B.note"])
        #expect(try await listsLibrary(library).listed)
    }

    @Test("a note created and one removed under marks: listed without a readdir, and right")
    func createAndRemove() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        var mark = await index.markListing(forChangesAt: ["D.note"])
        try library.writeNote("D.note", title: "D")
        await index.noteChanges(at: ["D.note"], since: mark)
        mark = await index.markListing(forChangesAt: ["C.note"])
        try FileManager.default.removeItem(atPath: library.path("C.note"))
        await index.noteChanges(at: ["C.note"], since: mark)

        let (listed, next) = try await listsLibrary(library)
        #expect(!listed)
        #expect(await next.entries.map(\.relativePath) == ["A.note", "B.note", "D.note"])
    }

    @Test("a copy made by another process while this one saves is found: the folder is listed again")
    func foreignCopyDuringChange() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        try FileManager.default.copyItem(atPath: library.path("A.note"), toPath: library.path("A copy.note"))
        await index.noteChanges(at: ["B.note"], since: mark)

        let (listed, next) = try await listsLibrary(library)
        #expect(listed)
        #expect(await next.entries(forKey: "A").map(\.relativePath) == ["A copy.note", "A.note"])
    }

    @Test("a removal by another process while this one saves is found")
    func foreignRemovalDuringChange() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        try FileManager.default.removeItem(atPath: library.path("C.note"))
        await index.noteChanges(at: ["B.note"], since: mark)

        let (listed, next) = try await listsLibrary(library)
        #expect(listed)
        #expect(await next.entries.map(\.relativePath) == ["A.note", "B.note"])
    }

    @Test("a change by another process before the mark is not taken for this one's")
    func foreignChangeBeforeMark() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        try await index.refreshListing()
        // Renamed by the shell: the same number of folders, another name.
        try FileManager.default.moveItem(atPath: library.path("C.note"), toPath: library.path("Z.note"))
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        await index.noteChanges(at: ["B.note"], since: mark)

        let (listed, next) = try await listsLibrary(library)
        #expect(listed)
        #expect(await next.entries.map(\.relativePath) == ["A.note", "B.note", "Z.note"])
    }

    @Test("a rename by another process that a mark missed: the entry found gone makes the next look list the folder")
    func vanishedEntryRelists() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        try await index.refreshListing()
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        // The one case the link count can't show: a rename in the same folder during the change.
        try FileManager.default.moveItem(atPath: library.path("C.note"), toPath: library.path("Z.note"))
        await index.noteChanges(at: ["B.note"], since: mark)
        #expect(try await listsLibrary(library).listed == false)

        // A lookup of C finds its entry gone: the folder is marked to be listed again.
        let stale = try DocumentIndex(library.configuration())
        let entry = try #require(await stale.entries(forKey: "C").first)
        #expect(await stale.revalidate(relativePath: entry.relativePath) == nil)
        let (listed, next) = try await listsLibrary(library)
        #expect(listed)
        #expect(await next.entries(forKey: "C").map(\.relativePath) == ["Z.note"])
    }

    @Test("a full refresh lists a folder that was only accounted for: it finds what a mark missed")
    func fullRefreshListsAccountedFolder() async throws {
        let library = try await builtLibrary()
        let index = try DocumentIndex(library.configuration())
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        try FileManager.default.moveItem(atPath: library.path("C.note"), toPath: library.path("Z.note"))
        await index.noteChanges(at: ["B.note"], since: mark)

        let faults = FaultInjector()
        let next = try DocumentIndex(library.configuration(fileSystem: faults.fileSystem))
        let batch = try await next.refresh()
        #expect(faults.trace.contains { $0.call == .listDirectory && $0.name == library.url.standardizedFileURL.path })
        #expect(batch.moved.map(\.to.relativePath) == ["Z.note"])
        #expect(await next.entries.map(\.relativePath) == ["A.note", "B.note", "Z.note"])
        // Listed now: the next listing refresh has nothing to list.
        #expect(try await listsLibrary(library).listed == false)
    }

    @Test("an index file of format version 1 is used as it is (migrated), and accounts for changes from then on")
    func versionOneIndexMigrates() async throws {
        let library = try await builtLibrary()
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: library.cache.url.path).first { $0.hasSuffix(".sqlite") })
        let path = library.cache.url.appendingPathComponent(file).path
        // Made a version 1 file, as the previous release wrote it.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "ALTER TABLE entries DROP COLUMN memberFolders; DROP TABLE accounted; PRAGMA user_version = 1")
        }
        let index = try DocumentIndex(library.configuration())
        #expect(await index.notices.isEmpty)
        let mark = await index.markListing(forChangesAt: ["B.note"])
        try swap(library, "B.note", title: "B2")
        await index.noteChanges(at: ["B.note"], since: mark)
        #expect(try await listsLibrary(library).listed == false)
        #expect(try await DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == IndexSchema.version)
    }
}
