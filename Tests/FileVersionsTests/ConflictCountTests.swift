import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Synchronization
import Testing

/// `unresolvedConflictCount(ofItemAt:)` counts what `unresolvedConflictVersions(ofItemAt:)`
/// lists, without reading records it read before (issue #16: a save listed every version twice).
@Suite("Conflict count")
struct ConflictCountTests {
    /// The count, checked against the whole listing, now and once the records are older than the
    /// racy-timestamp margin (when the count trusts what it remembered).
    func expectCount(_ expected: Int, _ store: VersionStore, _ item: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for _ in 0..<2 {
            #expect(try store.unresolvedConflictCount(ofItemAt: item) == expected, sourceLocation: sourceLocation)
            #expect(try store.unresolvedConflictVersions(ofItemAt: item).count == expected, sourceLocation: sourceLocation)
            usleep(60_000)
        }
    }

    @Test("the count follows conflicts kept, made of ordinary versions, resolved and removed by another store")
    func countFollowsAnotherStoresChanges() throws {
        let library = try VersionLibrary()
        let item = library.item("a.txt")
        try library.writeFile("a.txt", "theirs")
        // `counting` stands for this process, `writer` for another one (each has its own memory).
        let counting = library.store()
        let writer = library.store()
        let ordinary = try writer.addVersion(ofItemAt: item, origin: .save)
        try library.addVersions(of: item, to: writer, 0..<3, text: "older")
        try expectCount(0, counting, item)

        // The ordinary version's record is rewritten as a conflict (the same state kept as one).
        let marked = try writer.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(marked.persistentIdentifier == ordinary.persistentIdentifier)
        try expectCount(1, counting, item)

        try library.writeFile("a.txt", "theirs again")
        let second = try writer.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        try expectCount(2, counting, item)

        try writer.markResolved(marked, as: .keptCurrent)
        try expectCount(1, counting, item)

        try writer.remove(second, evenIfUnresolvedConflict: true)
        try expectCount(0, counting, item)
    }

    @Test("a count of a watched folder in the same span looks only at the names changed since the last count, and counts what a listing of every version gives")
    func aWatchedFolderIsCountedByItsChanges() throws {
        let library = try VersionLibrary()
        let item = library.item("c.txt")
        try library.writeFile("c.txt", "theirs")
        // `counting` stands for this process, `writer` for another one (each has its own memory).
        let counting = library.store(trustHorizon: .seconds(3_600))
        let writer = library.store(trustHorizon: .seconds(3_600))
        try library.addVersions(of: item, to: writer, 0..<40, text: "older")
        // Asked for twice, the folder is watched; a third count follows its changes.
        for _ in 0..<3 { #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0) }
        let passes = counting.conflictTally.passes.load(ordering: .relaxed)
        try library.writeFile("c.txt", "theirs again")
        let first = try writer.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 1)
        try library.writeFile("c.txt", "and again")
        let second = try writer.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 2)
        // Resolved: a new state entry beside the version, whose own name does not change.
        try writer.markResolved(first, as: .keptCurrent)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 1)
        try writer.remove(second, evenIfUnresolvedConflict: true)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        let source = try library.writeFile("source.txt", "one more")
        try writer.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        #expect(counting.conflictTally.passes.load(ordering: .relaxed) == passes, "no count passed over every version")
        #expect(try writer.unresolvedConflictVersions(ofItemAt: item).isEmpty)

        // A conflict whose contents go (by hand) is no longer counted, as the listing skips it.
        try library.writeFile("c.txt", "last")
        let third = try writer.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 1)
        try FileManager.default.removeItem(at: third.url)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        #expect(try writer.unresolvedConflictVersions(ofItemAt: item).isEmpty)

        // A version being built (`.new-…`, as a killed process leaves it): the count passes over
        // every version, which completes it once whole.
        let folder = try #require(library.documentFolders().first)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".new-abcdefghijkl"), withIntermediateDirectories: false)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        #expect(counting.conflictTally.passes.load(ordering: .relaxed) > passes)
    }

    @Test("a count looks at no version it classified before whose entry is at the same name and inode: one listing, whatever the number of versions")
    func unchangedRecordsAreNotRead() throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem, trustHorizon: .seconds(3_600))
        try library.addVersions(of: item, to: store, 0..<20)
        try library.writeFile("b.txt", "a conflict")
        try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        usleep(60_000)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        faults.reset()
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        let records = faults.trace.filter { $0.name.hasSuffix("record.json") }
        #expect(records.isEmpty, "\(records)")
        // Format 3: entries never change once named. The listing, and the unresolved conflict's contents.
        let entries = faults.trace.filter { $0.name.contains("/20") || $0.name.hasPrefix("20") }
        #expect(entries.count == 1 && entries[0].name.hasSuffix("/item"), "\(entries)")
        // An unchanged folder is not even listed where change times are exact (Linux 6.13+).
        // As the store found out (once, at its first count).
        let exact = store.exactChangeTimes.inStore(at: library.storeURL, using: FileSystem.live)
        #expect(faults.trace.filter { $0.call == .listDirectory }.count == (exact ? 0 : 1), "exact change times: \(exact); \(faults.trace)")
        // Another store of this process (a server's index has its own) takes the same listing.
        let others = FaultInjector()
        let another = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: others.fileSystem, trustHorizon: .seconds(3_600))
        #expect(try another.unresolvedConflictCount(ofItemAt: item) == 1)
        let listings = others.trace.filter { $0.call == .listDirectory && $0.name.contains("/documents/") }
        // Each store probes its file system once; on a busy machine one probe may find coarse
        // times where the other found exact ones: the listing is shared only when both found them.
        let alsoExact = another.exactChangeTimes.inStore(at: library.storeURL, using: FileSystem.live)
        #expect(listings.count == (exact && alsoExact ? 0 : 1), "exact change times: \(exact), \(alsoExact); \(listings)")
    }

    @Test("in a new span of the trust horizon, a count reads no record whose entry and record stat as when it was read; one damaged in place is read and no longer counted")
    func aNewSpanStatsInsteadOfReading() throws {
        let library = try VersionLibrary()
        let item = library.item("s.txt")
        try library.writeFile("s.txt", "current")
        let faults = FaultInjector()
        let horizon = Duration.milliseconds(250)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem, trustHorizon: horizon)
        try library.addVersions(of: item, to: store, 0..<10)
        var conflicts: [FileVersion] = []
        for index in 0..<2 {
            try library.writeFile("s.txt", "a conflict \(index)")
            conflicts.append(try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil))
        }
        try library.writeFile("s.txt", "current")
        // Read once the records are older than the racy-timestamp margin: their stats may vouch later.
        usleep(60_000)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 2)
        func opened() -> [String] {
            faults.trace.filter { $0.call == .open && $0.name.hasSuffix(VersionRecord.fileName) }.map(\.name)
        }
        func waitForNextSpan() {
            let span = store.trustSpan()
            while store.trustSpan() == span { usleep(10_000) }
        }
        waitForNextSpan()
        faults.reset()
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 2)
        #expect(opened().isEmpty, "\(opened())")
        // Each entry's folder and record were looked at (a stat each), the twelve of them.
        let looked = faults.trace.filter { $0.call == .status && $0.name.hasSuffix("/" + VersionRecord.fileName) }
        #expect(looked.count == 12, "\(looked)")

        // A record rewritten in place (by hand, a sync engine): its stat changes, it is read again.
        let record = conflicts[0].url.deletingLastPathComponent().appendingPathComponent(VersionRecord.fileName)
        let text = try String(contentsOf: record, encoding: .utf8)
        let handle = try FileHandle(forWritingTo: record)
        try handle.write(contentsOf: Data(text.replacingOccurrences(of: "\"conflict\" : true", with: "\"conflict\" : false").utf8))
        try handle.close()
        #expect(text.contains("\"conflict\" : true"), "\(text)")
        waitForNextSpan()
        faults.reset()
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        #expect(opened() == [record.path], "\(opened())")
        #expect(try store.unresolvedConflictVersions(ofItemAt: item).count == 1)

        // The other's contents removed: its entry's folder changed, it is read again and not counted.
        try FileManager.default.removeItem(at: conflicts[1].url)
        waitForNextSpan()
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
    }

    @Test("a version another save is still building does not make every count list the folder again; once its record is in (its writer killed before the rename), the next count completes and counts it")
    func aVersionBeingBuiltKeepsTheListing() throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem, trustHorizon: .seconds(3_600))
        try library.addVersions(of: item, to: store, 0..<3)
        try library.writeFile("b.txt", "a conflict")
        let conflict = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        let conflictEntry = conflict.url.deletingLastPathComponent()
        let folder = conflictEntry.deletingLastPathComponent()
        // Another save's version being built: its folder and contents, no record yet.
        let building = folder.appendingPathComponent(".new-buildingnow01")
        try FileManager.default.createDirectory(at: building, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: conflict.url, to: building.appendingPathComponent("item"))
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        faults.reset()
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        let exact = store.exactChangeTimes.inStore(at: library.storeURL, using: FileSystem.live)
        let listings = faults.trace.filter { $0.call == .listDirectory && $0.name.contains("/documents/") }
        // Where change times are exact, the folder is not listed again; elsewhere it is at every count.
        if exact { #expect(listings.isEmpty, "\(listings)") }

        // Its writer writes the record (last) and is killed before the rename: no name of the
        // folder changes, and the next count still completes the version.
        var record = try JSONSerialization.jsonObject(with: Data(contentsOf: conflictEntry.appendingPathComponent("record.json"))) as! [String: Any]
        let id = "20261128T000000Z-0000000000000001"
        #expect(VersionIdentifier.isValid(id))
        record["id"] = id
        try JSONSerialization.data(withJSONObject: record).write(to: building.appendingPathComponent("record.json"))
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 2)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(id).path))
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 2)
        #expect(try store.unresolvedConflictVersions(ofItemAt: item).count == 2)
    }

    @Test("a count that skipped the listing of an unchanged folder sees at once a conflict another process adds, one resolved, and one whose record comes after its folder")
    func anUnlistedCountSeesEveryChangeAtOnce() throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let store = library.store()
        try library.addVersions(of: item, to: store, 0..<5)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
        // Another process keeps a conflict: no pause between its change and the next count.
        let other = library.store()
        try library.writeFile("b.txt", "a conflict")
        let conflict = try other.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        try other.markResolved(conflict, as: .keptCurrent)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
        // A sync engine delivers another conflict: the version's folder first, its record after.
        let second = try other.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        let entry = second.url.deletingLastPathComponent()
        let delivered = entry.deletingLastPathComponent().appendingPathComponent(".delivering")
        try FileManager.default.moveItem(at: entry, to: delivered)
        let record = try Data(contentsOf: delivered.appendingPathComponent("record.json"))
        try FileManager.default.removeItem(at: delivered.appendingPathComponent("record.json"))
        try FileManager.default.moveItem(at: delivered, to: entry)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0, "not whole yet")
        try record.write(to: entry.appendingPathComponent("record.json"))
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1, "whole now: its folder's names did not change")
        // Its contents removed by hand: the unresolved conflict is checked at each count.
        try FileManager.default.removeItem(at: second.url)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
    }

    @Test("in a store of format 2, whose records may be rewritten in place, a count checks each record and sees one rewritten")
    func formatTwoRecordsAreChecked() throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let writer = library.store()
        try library.addVersions(of: item, to: writer, 0..<3)
        let storeFile = library.storeURL.appendingPathComponent("store.json")
        try Data("{\n  \"format\" : \"org.documentkit.version-store\",\n  \"version\" : 2\n}\n".utf8).write(to: storeFile)
        let faults = FaultInjector()
        let counting = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem)
        usleep(60_000)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        faults.reset()
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 0)
        #expect(faults.trace.filter { $0.call == .status && $0.name.hasSuffix("record.json") }.count == 3)
        #expect(faults.trace.filter { $0.call == .read }.isEmpty)
        // A writer of format 2 marks a kept version a conflict by rewriting its record in place.
        let version = try #require(try counting.otherVersions(ofItemAt: item).first)
        let recordURL = version.url.deletingLastPathComponent().appendingPathComponent("record.json")
        let text = try String(contentsOf: recordURL, encoding: .utf8).replacingOccurrences(of: "\"conflict\" : false", with: "\"conflict\" : true")
            .replacingOccurrences(of: "\"resolved\" : true", with: "\"resolved\" : false")
        try Data(text.utf8).write(to: recordURL.deletingLastPathComponent().appendingPathComponent("record.new"))
        #expect(rename(recordURL.deletingLastPathComponent().appendingPathComponent("record.new").path, recordURL.path) == 0)
        #expect(try counting.unresolvedConflictCount(ofItemAt: item) == 1)
        #expect(try String(contentsOf: storeFile, encoding: .utf8).contains("\"version\" : 2"), "a count changed the store's format")
    }

    @Test("a conflict version whose contents are gone, or whose record is damaged, is not counted, as the listing skips it")
    func damagedConflictsAreNotCounted() throws {
        let library = try VersionLibrary()
        let item = library.item("c.txt")
        // One that looks at every entry each time, as every store does once its trust horizon ends.
        let store = library.store(trustHorizon: .zero)
        var conflicts: [FileVersion] = []
        for index in 0..<3 {
            try library.writeFile("c.txt", "conflict \(index)")
            conflicts.append(try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil))
        }
        try expectCount(3, store, item)
        try FileManager.default.removeItem(at: conflicts[0].url)
        try expectCount(2, store, item)
        try Data("not json".utf8).write(to: conflicts[1].url.deletingLastPathComponent().appendingPathComponent("record.json"))
        try expectCount(1, store, item)
    }

    @Test("the tally keeps at most two generations of folders")
    func tallyIsBounded() {
        let tally = ConflictTally(generationLimit: 4)
        for index in 0..<50 {
            _ = tally.counting(named: "id-\(index)")
            #expect(tally.count <= 8)
        }
        #expect(tally.counting(named: "id-49").counted.withLock { $0.entries.isEmpty })
        let entry = ConflictTally.Entry(recordIdentity: 7, isUnresolvedConflict: true)
        let id = try! #require(VersionIdentifier.Packed("20261127T101500Z-0123456789abcdef"))
        tally.counting(named: "id-kept").counted.withLock { $0.entries[id] = entry }
        #expect(tally.counting(named: "id-kept").counted.withLock { $0.entries[id] } == entry)
        #expect(entry.hasRecordIdentity(7) && entry.isUnresolvedConflict && !entry.hasRecordIdentity(9))
        #expect(MemoryLayout<ConflictTally.Entry>.stride == 16)
    }

    @Test("packed version ids tell ids apart and refuse other names")
    func packedIdentifiers() throws {
        let a = try #require(VersionIdentifier.Packed("20261127T101500Z-0123456789abcdef"))
        let b = try #require(VersionIdentifier.Packed("20261127T101500Z-0123456789abcdee"))
        let c = try #require(VersionIdentifier.Packed("20261127T101501Z-0123456789abcdef"))
        #expect(Set([a, b, c]).count == 3)
        #expect(a.digits == 0x0123_4567_89ab_cdef && a.date == 20_261_127_101_500)
        #expect(VersionIdentifier.Packed(".new-abcdefghijkl") == nil)
        #expect(VersionIdentifier.Packed("20261127T101500Z-0123456789ABCDEF") == nil)
    }
}
