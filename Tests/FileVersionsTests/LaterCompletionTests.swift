// VersionStore.VersionCompletion.afterSaveReturns: a save by exchange returns once the new
// package is in place; the replaced package is made a version on a background queue, and this
// process's listings and saves of the document wait for it.

import Dispatch
import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Synchronization
import Testing

@Suite("A save that completes its version after returning", .timeLimit(.minutes(3)))
struct LaterCompletionTests {
    static let v1 = ["body.md": "v1", "attachments/a.txt": "A"]

    /// A file system on which a completion stops where it makes the replaced package's folders
    /// anew (`fresh`) until `open()`; `reached` is signalled when it gets there.
    final class Gate: Sendable {
        let reached = DispatchSemaphore(value: 0)
        private let gate = DispatchSemaphore(value: 0)
        var fileSystem: FileSystem {
            FileSystem(interceptor: { [self] call, name in
                if call == .makeDirectory, name == "fresh" {
                    reached.signal()
                    gate.wait()
                }
                return nil
            })
        }
        func open() { gate.signal() }
    }

    /// Runs `body` on a thread of its own; the semaphore is signalled when it returned.
    static func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done
    }

    static func store(_ library: VersionLibrary, fileSystem: FileSystem = .live, pruning: PruningSchedule = .keepAll) -> VersionStore {
        VersionStore(
            libraryURL: library.url, pruning: pruning, durability: .consistent, fileSystem: fileSystem, versionCompletion: .afterSaveReturns)
    }

    /// A note saved once more (v1 → v2) by a store whose completion of the kept version (v1) is
    /// stopped at the gate, reached when this returns.
    struct GatedSave {
        let library: VersionLibrary
        let item: URL
        let gate = Gate()
        let store: VersionStore
        let kept: FileVersion
        static let v2 = ["body.md": "v2", "attachments/a.txt": "A"]

        init() throws {
            library = try VersionLibrary()
            item = try ExchangeKeepTests.makeNote(library, members: LaterCompletionTests.v1)
            store = LaterCompletionTests.store(library, fileSystem: gate.fileSystem)
            let options = SaveOptions(durability: .consistent, fileSystem: gate.fileSystem)
            kept = try #require(try store.save(ExchangeKeepTests.tree(Self.v2), to: item, options: options, keepingReplacedAs: .save).kept)
            #expect(gate.reached.wait(timeout: .now() + 30) == .success, "the version is completed after the save returned")
        }
    }

    @Test func aSaveThatLinkedUnchangedMembersCompletesItsVersionBeforeItReturns() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        let store = Self.store(library)
        let read = try FileWrapper(contentsOf: item)
        // Only the body changes: the save links the unchanged attachment into its new package, and
        // the version's rebuild unlinks the replaced package's name of it.
        var next = try ExchangeKeepTests.tree(["body.md": "v2", "attachments/a.txt": "A"])
        next["attachments"] = read["attachments"]
        _ = try store.save(next, to: item, options: SaveOptions(durability: .consistent), keepingReplacedAs: .save)
        let member = item.appendingPathComponent("attachments/a.txt").path
        var before = stat()
        #expect(lstat(member, &before) == 0)
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty, "the version was complete when the save returned")
        store.waitForPendingVersions()
        var after = stat()
        #expect(lstat(member, &after) == 0)
        // Nothing after the return moved the document's member: a reader that looked at it finds it as it was.
        #expect(before.st_nlink == after.st_nlink && after.st_nlink == 1)
        #expect(before.st_ctim.tv_sec == after.st_ctim.tv_sec && before.st_ctim.tv_nsec == after.st_ctim.tv_nsec)
    }

    @Test func theSaveReturnsBeforeTheVersionIsCompleteAndAListingWaitsForIt() throws {
        let saved = try GatedSave()
        let (library, item, gate, store, kept) = (saved.library, saved.item, saved.gate, saved.store, saved.kept)
        #expect(try texts(of: item) == GatedSave.v2)
        let waiting = try ExchangeKeepTests.hiddenEntries(library)
        #expect(waiting.count == 1 && waiting.first?.hasPrefix(".swap-") == true, "\(waiting)")
        #expect(!FileManager.default.fileExists(atPath: kept.url.path))
        // The save's shared hold on the document's folder is kept meanwhile: no other process settles the entry.
        let lockPath = library.storeURL.appendingPathComponent("locks/id-TRIP").path
        let lock = open(lockPath, O_RDWR)
        #expect(lock >= 0)
        #expect(flock(lock, LOCK_EX | LOCK_NB) != 0, "the folder's lock was free while its version was being completed")
        close(lock)

        // A listing in this process waits for the version rather than leaving it out.
        let listed = Mutex<[String]?>(nil)
        let done = Self.onThread {
            let ids = (try? store.versions(ofItemAt: item))?.others.map(\.persistentIdentifier)
            listed.withLock { $0 = ids ?? ["failed"] }
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the listing went on while the version was incomplete")
        #expect(listed.withLock { $0 } == nil)
        gate.open()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(listed.withLock { $0 } == [kept.persistentIdentifier])
        #expect(try texts(of: kept.url) == Self.v1)
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
        // Complete, it let the folder go: another process's cleaning may lock it.
        let after = open(lockPath, O_RDWR)
        #expect(flock(after, LOCK_EX | LOCK_NB) == 0, "the completion kept the folder's lock")
        close(after)
    }

    @Test func everySaveInARowIsListedRightAfterItWithTheStateItReplaced() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        let store = Self.store(library)
        var tree = try FileWrapper(contentsOf: item)
        var expected: [String: String] = [:]  // version id → the body it holds
        for index in 2...12 {
            var next = try ExchangeKeepTests.tree(["body.md": "v\(index)", "attachments/a.txt": "A"])
            next["attachments"] = tree["attachments"]  // unchanged: linked from the document
            let result = try store.save(next, to: item, keepingReplacedAs: .save)
            tree = result.saved
            let kept = try #require(result.kept)
            expected[kept.persistentIdentifier] = "v\(index - 1)"
            let others = try store.versions(ofItemAt: item).others
            #expect(Set(others.map(\.persistentIdentifier)) == Set(expected.keys))
        }
        store.waitForPendingVersions()
        let others = try store.versions(ofItemAt: item).others
        for version in others {
            #expect(try texts(of: version.url)["body.md"] == expected[version.persistentIdentifier])
            #expect(try inode(version.url.appendingPathComponent("attachments/a.txt").path) != inode(item.appendingPathComponent("attachments/a.txt").path))
        }
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
    }

    @Test func anotherStoreOfTheLibraryInTheProcessWaitsToo() throws {
        let saved = try GatedSave()
        let (library, item, gate, kept) = (saved.library, saved.item, saved.gate, saved.kept)
        // The default store of the same folder (another instance) lists it complete, once it is.
        let listing = Mutex<VersionListing?>(nil)
        let done = Self.onThread { listing.withLock { $0 = try? library.store().versions(ofItemAt: item) } }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "another store listed the folder while its version was incomplete")
        gate.open()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let found = try #require(listing.withLock { $0 })
        #expect(found.problems.isEmpty)
        #expect(found.others.map(\.persistentIdentifier) == [kept.persistentIdentifier])
        #expect(try texts(of: kept.url) == Self.v1)
    }

    @Test func restoringTheVersionASaveReturnedWaitsForIt() throws {
        let saved = try GatedSave()
        let (library, item, gate, store, kept) = (saved.library, saved.item, saved.gate, saved.store, saved.kept)
        let restored = Mutex<String?>(nil)
        let done = Self.onThread {
            do {
                try Self.store(library).replaceItem(at: item, with: kept, keepingCurrentAs: .save)
                restored.withLock { $0 = "restored" }
            } catch {
                restored.withLock { $0 = "\(error)" }
            }
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the restore read a version still being completed")
        gate.open()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(restored.withLock { $0 } == "restored")
        #expect(try texts(of: item) == Self.v1)
        store.waitForPendingVersions()
        let bodies = try Set(store.versions(ofItemAt: item).others.map { try texts(of: $0.url)["body.md"] ?? "?" })
        #expect(bodies == ["v1", "v2"])
    }

    @Test func markingOrRemovingTheVersionASaveReturnedWaitsForIt() throws {
        let saved = try GatedSave()
        let (library, item, gate, store, kept) = (saved.library, saved.item, saved.gate, saved.store, saved.kept)
        let outcome = Mutex<[String]>([])
        let done = Self.onThread {
            let other = Self.store(library)
            do {
                _ = try other.markResolved(kept, as: .keptCurrent)
                outcome.withLock { $0.append("marked") }
                try other.remove(kept)
                outcome.withLock { $0.append("removed") }
            } catch {
                outcome.withLock { $0.append("\(error)") }
            }
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "an operation on the version did not wait for it")
        gate.open()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcome.withLock { $0 } == ["marked", "removed"])
        #expect(try store.versions(ofItemAt: item).others.isEmpty, "the removal of a version still being completed was lost")
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
    }

    @Test func aSavesPruningCheckFromTheOldestIdAndTheCountDecidesAsEveryDecodedDateDid() throws {
        // The rule as it was, with every id's date decoded.
        func everyDate(_ schedule: PruningSchedule, _ dates: [Date], _ now: Date) -> Bool {
            if schedule.maximumBytes != nil { return dates.count > 1 }
            if schedule.bands.isEmpty && schedule.maximumAge == nil { return false }
            guard dates.count > 1 else { return false }
            let keepAllUntil = schedule.bands.sorted { ($0.until, $0.interval) < ($1.until, $1.interval) }
                .prefix { $0.interval == 0 }.last?.until ?? 0
            let limit = min(keepAllUntil, schedule.maximumAge ?? .infinity)
            return dates.contains { now.timeIntervalSince($0) >= limit }
        }
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let schedules: [PruningSchedule] = [
            .standard, .keepAll, PruningSchedule(bands: [], maximumBytes: 10),
            PruningSchedule(bands: [PruningSchedule.Band(until: 600, interval: 0)], maximumAge: 60_000),
        ]
        var decided: Set<Bool> = []
        for _ in 0..<300 {
            let ids = (0..<Int.random(in: 0...6)).map { _ in
                VersionIdentifier.make(date: now.addingTimeInterval(-Double(Int.random(in: 0...40_000_000))), digest: nil)
            }
            let oldest = ids.min().flatMap(VersionIdentifier.date(of:))
            for schedule in schedules {
                let answer = schedule.mayRemove(fromVersionsCount: ids.count, oldest: oldest, now: now)
                #expect(answer == everyDate(schedule, ids.compactMap(VersionIdentifier.date(of:)), now), "\(ids)")
                decided.insert(answer)
            }
        }
        #expect(decided == [true, false])
    }

    @Test func pruningRunsAtTheNextSaveOnceTheVersionIsComplete() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        // One version per 1,000 s: of versions made seconds apart, the newest only.
        let store = Self.store(library, pruning: PruningSchedule(bands: [PruningSchedule.Band(until: 86_400, interval: 1_000)]))
        for index in 2...9 {
            try store.save(ExchangeKeepTests.tree(["body.md": "v\(index)", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save)
        }
        // The last save pruned what the one before kept (v7 left, the newest then), then kept v8.
        func bodies() throws -> [String] { try store.versions(ofItemAt: item).others.map { try texts(of: $0.url)["body.md"] ?? "?" } }
        #expect(try bodies() == ["v8", "v7"])
        // A prune now waits for nothing and leaves the newest.
        try store.prune(ofItemAt: item)
        #expect(try bodies() == ["v8"])
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
    }
}
