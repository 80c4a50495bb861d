@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import GRDB
import Testing

@Suite("Index persistence")
struct IndexPersistenceTests {
    /// The manifests an index opened, from a fault injector's trace.
    static func manifestOpens(_ injector: FaultInjector) -> Int {
        injector.trace.filter { $0.call == .open && $0.name == "Info.json" }.count
    }

    static func indexFile(_ library: IndexTestLibrary) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: library.cache.url.path).filter { $0.hasSuffix(".sqlite") }
        #expect(names.count == 1)
        return library.cache.url.appendingPathComponent(names[0]).path
    }

    @Test("making an index file forgets those not opened for 30 days (with their -wal and -shm), keeps the others, and opening one marks it used")
    func indexFilesOfGoneLibrariesAreForgotten() async throws {
        let cache = try TemporaryDirectory(prefix: "index-prune-cache")
        func configuration(_ library: IndexTestLibrary) -> DocumentIndex.Configuration {
            var configuration = library.configuration()
            configuration.cacheFolder = cache.url
            return configuration
        }
        func files() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: cache.url.path)) }
        func age(_ name: String, days: Double) throws {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -days * 86_400)], ofItemAtPath: cache.url.appendingPathComponent(name).path)
        }
        let gone = try IndexTestLibrary()
        let idle = try IndexTestLibrary()
        for library in [gone, idle] {
            try library.writeNote("A.note", title: "A")
            let index = try DocumentIndex(configuration(library))
            try await index.refresh()
            await index.close()
        }
        let before = try files()
        let indexes = before.filter { $0.hasSuffix(".sqlite") }
        #expect(indexes.count == 2)
        // Which file is whose: the one opened last is the newest.
        let byDate = try indexes.sorted {
            let attributes = try [$0, $1].map { try FileManager.default.attributesOfItem(atPath: cache.url.appendingPathComponent($0).path) }
            return (attributes[0][.modificationDate] as! Date) < (attributes[1][.modificationDate] as! Date)
        }
        let (goneFile, idleFile) = (byDate[0], byDate[1])
        try Data().write(to: cache.url.appendingPathComponent(goneFile + "-wal"))
        try age(goneFile, days: 40)
        try age(idleFile, days: 10)

        // Opening an existing index makes no pruning; it marks the file used.
        let reopened = try DocumentIndex(configuration(idle))
        await reopened.close()
        let idleDate = try FileManager.default.attributesOfItem(atPath: cache.url.appendingPathComponent(idleFile).path)[.modificationDate] as! Date
        #expect(idleDate.timeIntervalSinceNow > -60)
        #expect(try files().contains(goneFile))

        // A new library's index file is made: the month-old one goes, with its -wal.
        let fresh = try IndexTestLibrary()
        try fresh.writeNote("B.note", title: "B")
        let made = try DocumentIndex(configuration(fresh))
        try await made.refresh()
        await made.close()
        let after = try files()
        #expect(!after.contains(goneFile) && !after.contains(goneFile + "-wal"), "\(after.sorted())")
        #expect(after.contains(idleFile))
        #expect(after.filter { $0.hasSuffix(".sqlite") }.count == 2)
        // The forgotten library's index is made again by a scan: the answers are right.
        let again = try DocumentIndex(configuration(gone))
        #expect(try await again.refresh().added.map(\.key) == ["A"])
        await again.close()
    }

    @Test("a large index is loaded in two halves at once (two connections), whatever its rowids, and gives the same entries")
    func loadedInHalves() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<60 { try library.writeNote("N\(n).note", title: "Note \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        // Rows replaced (new, higher rowids) and removed: the halves are split by position, not by value.
        for n in 0..<20 {
            let id = try #require(await DocumentIndex(library.configuration(persistent: false)).entry(atRelativePath: "N\(n).note")?.documentIdentifier)
            try library.writeNote("N\(n).note", title: "Edited \(n)", identifier: id)
        }
        for n in 50..<55 { try FileManager.default.removeItem(atPath: library.path("N\(n).note")) }
        try await DocumentIndex(library.configuration()).refresh()
        let opened = try DocumentIndex(library.configuration())
        let database = try #require(await opened.database)
        let loaded = try #require(try database.loadInHalves(count: 55, libraryURL: library.url))
        let whole = try IndexDatabase.$parallelLoadThreshold.withValue(.max) { try database.loadAll(libraryURL: library.url) }
        #expect(loaded.records.count == 55)
        #expect(Set(loaded.records.values) == Set(whole.records.values))
        #expect(loaded.folders == whole.folders && loaded.accounted == whole.accounted)

        let reopened = try DocumentIndex(library.configuration())
        let batch = try await IndexDatabase.$parallelLoadThreshold.withValue(16) { try await reopened.refresh() }
        #expect(batch.added.isEmpty && batch.removed.isEmpty && batch.changed.isEmpty)
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        #expect(await reopened.entries == fresh.entries)
    }

    @Test("a new process's refresh reads only the manifest that changed and stats the rest")
    func startUpReadsOnlyChangedManifests() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<20 { try library.writeNote("N\(n).note", title: "Note \(n)") }
        let first = try DocumentIndex(library.configuration())
        try await first.refresh()
        await first.close()
        let id = await first.entry(atRelativePath: "N7.note")!.documentIdentifier!
        try library.writeNote("N7.note", title: "Changed", identifier: id)

        let injector = FaultInjector()
        let second = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        let batch = try await second.refresh()
        #expect(Self.manifestOpens(injector) == 1)
        #expect(batch.changed.map(\.relativePath) == ["N7.note"])
        #expect(batch.added.isEmpty && batch.removed.isEmpty)
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        #expect(await second.entries == fresh.entries)
        #expect(await second.notices.isEmpty)
    }

    @Test("a lookup by key in a new process is a query of the persisted index: no manifest is read")
    func lookupsAreQueries() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<10 { try library.writeNote("N\(n).note", title: "Note \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        #expect(await index.entries(forKey: "Note 4").map(\.relativePath) == ["N4.note"])
        #expect(await index.entries(forKeyIgnoringCase: "NOTE 5").map(\.relativePath) == ["N5.note"])
        #expect(Self.manifestOpens(injector) == 0)
        // refreshListing finds a note another process added, without a stat per entry.
        try library.writeNote("Added.note", title: "Added")
        injector.reset()
        let batch = try await index.refreshListing()
        #expect(batch.added.map(\.relativePath) == ["Added.note"])
        #expect(Self.manifestOpens(injector) == 1)
        #expect(await index.entries(forKey: "Added").map(\.relativePath) == ["Added.note"])
    }

    /// Makes the index, spoils its file with `spoil`, and checks a new index answers right with a notice.
    func checkRebuilt(_ expected: String, spoil: (String, IndexTestLibrary) async throws -> Void) async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "Alpha")
        try library.writeNote("B.note", title: "Beta")
        try await DocumentIndex(library.configuration()).refresh()
        let file = try Self.indexFile(library)
        try await spoil(file, library)
        try library.writeNote("C.note", title: "Gamma")
        let index = try DocumentIndex(library.configuration())
        #expect(await index.entries(forKey: "Gamma").map(\.relativePath) == ["C.note"])
        #expect(await index.entries.map(\.relativePath) == ["A.note", "B.note", "C.note"])
        let notices = await index.notices
        #expect(notices.contains { $0.contains(expected) && $0.contains("rebuilt") }, "\(notices)")
        // And it is usable again: a third process has no notice.
        #expect(await (try DocumentIndex(library.configuration())).notices.isEmpty)
    }

    @Test("an index file of random bytes is rebuilt with a notice")
    func randomBytes() async throws {
        try await checkRebuilt("damaged") { file, _ in
            IndexDatabase.remove(at: file)
            var generator = SystemRandomNumberGenerator()
            try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: URL(fileURLWithPath: file))
        }
    }

    @Test("a truncated index file is rebuilt with a notice")
    func truncated() async throws {
        try await checkRebuilt("damaged") { file, _ in
            // Fold the WAL in first, so the truncation cuts the tables.
            try await DatabaseQueue(path: file).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            IndexDatabase.remove(at: file + "-wal")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            try handle.truncate(atOffset: 1500)
            try handle.close()
        }
    }

    @Test("another SQLite database in the index's place is rebuilt with a notice")
    func foreign() async throws {
        try await checkRebuilt("not a document index") { file, _ in
            IndexDatabase.remove(at: file)
            try await DatabaseQueue(path: file).write { try $0.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        }
    }

    @Test("an index of a newer format is rebuilt with a notice")
    func newer() async throws {
        try await checkRebuilt("newer format") { file, _ in
            try await DatabaseQueue(path: file).write { try $0.execute(sql: "PRAGMA user_version = 99") }
        }
    }

    @Test("an index copied from another library (as a sync engine would) is rebuilt with a notice")
    func copiedFromAnotherLibrary() async throws {
        try await checkRebuilt("another library") { file, library in
            // Another library's index (other inode, other path) copied over this one's file.
            let other = try IndexTestLibrary()
            try other.writeNote("A.note", title: "Wrong")
            try other.writeNote("C.note", title: "Wrong too")
            var configuration = other.configuration()
            configuration.cacheFolder = other.cache.url
            try await DocumentIndex(configuration).refresh()
            let otherFile = try Self.indexFile(other)
            try await DatabaseQueue(path: otherFile).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            IndexDatabase.remove(at: file)
            try FileManager.default.copyItem(atPath: otherFile, toPath: file)
        }
    }

    @Test("two indexes of one library updating the persisted index at once lose nothing")
    func concurrentWriters() async throws {
        let library = try IndexTestLibrary()
        try await DocumentIndex(library.configuration()).refresh()
        let one = try DocumentIndex(library.configuration())
        let two = try DocumentIndex(library.configuration())
        async let first: Void = {
            for n in 0..<15 {
                try library.writeNote("One\(n).note", title: "One \(n)")
                await one.noteChanges(at: ["One\(n).note"])
            }
        }()
        async let second: Void = {
            for n in 0..<15 {
                try library.writeNote("Two\(n).note", title: "Two \(n)")
                await two.noteChanges(at: ["Two\(n).note"])
            }
        }()
        _ = try await (first, second)
        let injector = FaultInjector()
        let third = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        for n in 0..<15 {
            #expect(await third.entries(forKey: "One \(n)").count == 1)
            #expect(await third.entries(forKey: "Two \(n)").count == 1)
        }
        #expect(Self.manifestOpens(injector) == 0)
        let notices = await one.notices + two.notices
        #expect(notices.isEmpty)
    }
}
