import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Synchronization
import SystemPackage
import Testing

/// Format 3: an entry never changes once named; a version's new state is a state entry beside it.
@Suite("Version store state entries", .timeLimit(.minutes(1)))
struct StateEntryTests {
    static func stateNames(_ library: VersionLibrary) -> [String] {
        library.documentFolders().flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.contains(".state-") }
        }.sorted()
    }

    /// A library whose `a.txt` has one unresolved conflict version (`theirs`), and its store.
    static func libraryWithAConflict(fileSystem: FileSystem = .live) throws -> (VersionLibrary, URL, VersionStore, FileVersion) {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "current")
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: fileSystem)
        let theirs = try library.writeFile("theirs.txt", "theirs")
        let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, origin: .conflict, isConflict: true)
        return (library, item, store, conflict)
    }

    /// The record of `version` as another machine resolving it (`keptCurrent`) would write it.
    static func resolvedRecord(of version: FileVersion) throws -> [String: Any] {
        var json = try record(of: version)
        json["resolved"] = true
        json["resolution"] = ["how": "keptCurrent", "date": "2026-11-27T10:00:00.000Z"]
        return json
    }

    @Test("state entry names: a version id, the time to the millisecond, 8 random characters; anything else is not one")
    func names() throws {
        let id = "20261122T061514Z-678fd040094e5329"
        let name = StateEntryName.make(for: id, date: fixedDate)
        #expect(name.hasPrefix(id + ".state-20260304T050607890Z-"), "\(name)")
        #expect(name.utf8.count == 68)
        #expect(StateEntryName.parse(name)?.id == id)
        let later = StateEntryName.make(for: id, date: fixedDate.addingTimeInterval(0.001))
        #expect(try #require(StateEntryName.parse(later)?.suffix) > #require(StateEntryName.parse(name)?.suffix))
        for bad in [id, id + ".state-", name + "x", String(name.dropLast()) + "_", id + ".statf" + name.dropFirst(39),
                    "20261122T061514Z-678fd040094e532X" + name.dropFirst(33)] {
            #expect(StateEntryName.parse(bad) == nil, "\(bad)")
        }
        // The quick test a listing's scan makes: every state entry passes; names of other shapes don't.
        #expect(StateEntryName.mayBe(name) && StateEntryName.mayBe(later))
        for other in [id, id + ".state-", name + "x", String(name.dropFirst()), id + ".statf" + name.dropFirst(39)] {
            #expect(!StateEntryName.mayBe(other), "\(other)")
        }
    }

    @Test("a state a sync engine delivers (a new state entry) is seen at once by a count and a listing that remembered the version")
    func deliveredStateIsSeenAtOnce() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        defer { withExtendedLifetime(library) {} }  // its folder goes with it
        usleep(60_000)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        #expect(try store.versions(ofItemAt: item).unresolvedConflicts.count == 1)

        // Another machine resolved it; the engine writes the new entry under a temporary name and renames it.
        let json = try Self.resolvedRecord(of: conflict)
        let folder = conflict.url.deletingLastPathComponent().deletingLastPathComponent()
        let arriving = folder.appendingPathComponent(".syncthing.state.tmp")
        try FileManager.default.createDirectory(at: arriving, withIntermediateDirectories: false)
        try JSONSerialization.data(withJSONObject: json, options: .sortedKeys).write(to: arriving.appendingPathComponent("record.json"))
        #expect(rename(arriving.path, folder.appendingPathComponent(StateEntryName.make(for: conflict.persistentIdentifier)).path) == 0)

        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
        let listed = try #require(try store.versions(ofItemAt: item).others.first)
        #expect(listed.isResolved && listed.resolution == .keptCurrent)
    }

    @Test("removing a version removes its states; the same contents kept again later start from their own record")
    func removalTakesTheStates() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        let resolved = try store.markResolved(conflict, as: .keptThis)
        #expect(Self.stateNames(library).count == 1)
        try store.remove(resolved)
        #expect(Self.stateNames(library).isEmpty)
        #expect(try store.versions(ofItemAt: item).others.isEmpty)

        let again = try store.addVersion(ofItemAt: item, withContentsOf: library.item("theirs.txt"), origin: .conflict, isConflict: true)
        #expect(again.persistentIdentifier == conflict.persistentIdentifier)
        #expect(again.isUnresolvedConflict)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        #expect(try library.store().unresolvedConflictVersions(ofItemAt: item).map(\.persistentIdentifier) == [conflict.persistentIdentifier])
    }

    @Test("a removal that fails after its first step leaves the version gone, never a resolved conflict unresolved again")
    func removalOrder() throws {
        // The second rename aside of the removal fails (a process killed there leaves the same).
        let asides = Mutex(0)
        let fileSystem = FileSystem(interceptor: { call, name in
            guard call == .rename, name.contains("/.removing-") else { return nil }
            return asides.withLock { count in
                count += 1
                return count == 2 ? Errno.ioError : nil
            }
        })
        let (library, item, store, conflict) = try Self.libraryWithAConflict(fileSystem: fileSystem)
        let resolved = try store.markResolved(conflict, as: .keptCurrent)
        #expect(throws: DocumentKitError.self) { try store.remove(resolved) }
        let after = try library.store().versions(ofItemAt: item)
        #expect(after.unresolvedConflicts.isEmpty)
        #expect(after.others.isEmpty, "\(after.others.map(\.persistentIdentifier))")
        #expect(Self.stateNames(library).count == 1)  // orphaned: ignored, cleaned up a day later
    }

    @Test("states left by a removal that died are ignored, and removed by a later save's cleanup once a day old")
    func orphanedStatesAreCleanedUp() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        try store.markResolved(conflict, as: .keptCurrent)
        let folder = conflict.url.deletingLastPathComponent().deletingLastPathComponent()
        let fresh = try #require(Self.stateNames(library).first)
        // The removal died after the version went; one of its states is two days old.
        try FileManager.default.removeItem(at: conflict.url.deletingLastPathComponent())
        let old = StateEntryName.make(for: conflict.persistentIdentifier, date: Date().addingTimeInterval(-2 * 86_400))
        try FileManager.default.copyItem(at: folder.appendingPathComponent(fresh), to: folder.appendingPathComponent(old))
        let fresher = library.store()
        #expect(try fresher.versions(ofItemAt: item).others.isEmpty)
        #expect(try fresher.versions(ofItemAt: item).problems.isEmpty)
        #expect(try fresher.unresolvedConflictCount(ofItemAt: item) == 0)
        try library.writeFile("a.txt", "saved again")
        try fresher.save(FileWrapper(regularFileWithContents: Data("saved".utf8)), to: item, keepingReplacedAs: .save)
        #expect(Self.stateNames(library) == [fresh])
    }

    @Test("a state a killed writer left hidden (its record written, never renamed into place) is not the version's state, and the next save removes it")
    func aStateLeftHiddenByAKilledWriterIsIgnoredThenRemoved() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        let folder = conflict.url.deletingLastPathComponent().deletingLastPathComponent()
        // `writeState` builds `.new-RANDOM/record.json`, then renames it to `ID.state-…`: killed between.
        let hidden = folder.appendingPathComponent(".new-killedwriter01", isDirectory: true)
        try FileManager.default.createDirectory(at: hidden, withIntermediateDirectories: false)
        let resolved = try JSONSerialization.data(withJSONObject: try Self.resolvedRecord(of: conflict))
        try resolved.write(to: hidden.appendingPathComponent("record.json"))

        for reader in [store, library.store()] {
            #expect(try reader.unresolvedConflictCount(ofItemAt: item) == 1, "the resolution was never placed")
            let listing = try reader.versions(ofItemAt: item)
            #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == [conflict.persistentIdentifier])
            #expect(listing.problems.isEmpty, "\(listing.problems)")
        }
        try library.writeFile("a.txt", "saved again")
        try store.save(FileWrapper(regularFileWithContents: Data("saved".utf8)), to: item, keepingReplacedAs: .save)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains(hidden.lastPathComponent), "the next save's cleanup removed it: \(names)")
        #expect(Self.stateNames(library).isEmpty, "it was not completed as a state either")
        #expect(try library.store().versions(ofItemAt: item).unresolvedConflicts.map(\.persistentIdentifier) == [conflict.persistentIdentifier])
    }

    @Test("a new state is named after the newest one there, whatever the clock says")
    func statesStayInOrder() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        _ = try store.markResolved(conflict, as: .keptThis)
        // A machine whose clock ran a day ahead kept it again as a conflict.
        let folder = conflict.url.deletingLastPathComponent().deletingLastPathComponent()
        let first = try #require(Self.stateNames(library).first)
        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(first + "/record.json"))) as! [String: Any]
        json["resolved"] = false
        json["resolution"] = nil
        let ahead = folder.appendingPathComponent(StateEntryName.make(for: conflict.persistentIdentifier, date: Date().addingTimeInterval(86_400)))
        try FileManager.default.createDirectory(at: ahead, withIntermediateDirectories: false)
        try JSONSerialization.data(withJSONObject: json, options: .sortedKeys).write(to: ahead.appendingPathComponent("record.json"))
        let unresolved = try #require(try library.store().unresolvedConflictVersions(ofItemAt: item).first)
        try library.store().markResolved(unresolved, as: .merged)
        let names = Self.stateNames(library)
        #expect(names.count == 3 && names.last != ahead.lastPathComponent, "\(names)")
        let listed = try #require(try library.store().versions(ofItemAt: item).others.first)
        #expect(listed.isResolved && listed.resolution == .merged)
    }

    @Test("a state whose folder came before its record (a sync engine delivering it) is counted once the record is there, at once")
    func stateArrivingInPieces() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        defer { withExtendedLifetime(library) {} }  // its folder goes with it
        usleep(60_000)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)
        let json = try Self.resolvedRecord(of: conflict)
        let folder = conflict.url.deletingLastPathComponent().deletingLastPathComponent()
        let state = folder.appendingPathComponent(StateEntryName.make(for: conflict.persistentIdentifier))
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 1)  // the record is not there yet
        let arriving = state.appendingPathComponent(".syncthing.record.json.tmp")
        try JSONSerialization.data(withJSONObject: json, options: .sortedKeys).write(to: arriving)
        #expect(rename(arriving.path, state.appendingPathComponent("record.json").path) == 0)
        #expect(try store.unresolvedConflictCount(ofItemAt: item) == 0)
    }

    @Test("a state entry whose version is not there yet is ignored, and is the version's state once it arrives")
    func stateBeforeItsVersion() throws {
        let (library, item, store, conflict) = try Self.libraryWithAConflict()
        try store.markResolved(conflict, as: .merged)
        let entry = conflict.url.deletingLastPathComponent()
        let away = library.url.appendingPathComponent("away")
        try FileManager.default.moveItem(at: entry, to: away)
        let fresh = library.store()
        #expect(try fresh.versions(ofItemAt: item).others.isEmpty)
        #expect(try fresh.versions(ofItemAt: item).problems.isEmpty)
        #expect(try fresh.unresolvedConflictCount(ofItemAt: item) == 0)
        try FileManager.default.moveItem(at: away, to: entry)
        let arrived = try #require(try fresh.versions(ofItemAt: item).others.first)
        #expect(arrived.isConflict && arrived.isResolved && arrived.resolution == .merged)
    }

    @Test("a version 2 store is read as it is and becomes version 4 at its first write, its versions and states as they were")
    func versionTwoIsMigratedByAWrite() throws {
        let fixture = VersionStoreFixtureTests.fixtures.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("v2/fixtures/library")
        let folder = try TemporaryDirectory(prefix: "v2-to-v3")
        let library = folder.url.appendingPathComponent("library")
        try FileManager.default.copyItem(at: fixture, to: library)
        let note = library.appendingPathComponent("trip.note")
        let storeFile = library.appendingPathComponent(".documentkit-versions/store.json")
        let store = VersionStore(libraryURL: library, pruning: .keepAll)
        let before = try store.versions(ofItemAt: note)
        #expect(try store.unresolvedConflictCount(ofItemAt: note) == 1)
        #expect(try String(contentsOf: storeFile, encoding: .utf8).contains("\"version\" : 2"), "a read migrated the store")

        let resolved = try store.markResolved(before.unresolvedConflicts[0], as: .keptCurrent)
        #expect(try String(contentsOf: storeFile, encoding: .utf8).contains("\"version\" : 4"))
        let after = try VersionStore(libraryURL: library, pruning: .keepAll).versions(ofItemAt: note)
        #expect(after.problems.isEmpty)
        #expect(after.others.map(\.persistentIdentifier) == before.others.map(\.persistentIdentifier))
        #expect(after.unresolvedConflicts.isEmpty)
        #expect(after.others.first { $0.persistentIdentifier == resolved.persistentIdentifier }?.resolution == .keptCurrent)
    }
}

@Suite("Version ids")
struct VersionIdentifierTests {
    @Test("an id's date is the calendar's, leap days and centuries included; a name that is not an id has none")
    func dates() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for text in ["19700101T000000Z", "20000229T235959Z", "20261127T193005Z", "21000301T120000Z", "19991231T235959Z", "20240229T000001Z"] {
            let id = text + "-0123456789abcdef"
            let digits = Array(text.utf8).map { Int($0) - 48 }
            func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + digits[$1] } }
            let expected = calendar.date(from: DateComponents(
                year: number(0..<4), month: number(4..<6), day: number(6..<8), hour: number(9..<11), minute: number(11..<13), second: number(13..<15)))
            #expect(VersionIdentifier.date(of: id) == expected, "\(id)")
        }
        for name in ["20261327T193005Z-0123456789abcdef", "20261127T193005Z-0123456789abcdeg", "20261127T193005Z", ".new-abc"] {
            #expect(VersionIdentifier.date(of: name) == nil, "\(name)")
        }
        #expect(VersionIdentifier.date(of: VersionIdentifier.make(date: fixedDate, digest: nil)) == Date(timeIntervalSince1970: 1_772_600_767))
    }
}
