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

    static func store(_ library: VersionLibrary, fileSystem: FileSystem = .live, pruning: PruningSchedule = .keepAll) -> VersionStore {
        VersionStore(
            libraryURL: library.url, pruning: pruning, durability: .consistent, fileSystem: fileSystem, versionCompletion: .afterSaveReturns)
    }

    @Test func theSaveReturnsBeforeTheVersionIsCompleteAndAListingWaitsForIt() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        // The completion stops where it makes the replaced package's folders anew, until released.
        let reached = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let gated = FileSystem(interceptor: { call, name in
            if call == .makeDirectory, name == "fresh" {
                reached.signal()
                gate.wait()
            }
            return nil
        })
        let store = Self.store(library, fileSystem: gated)
        let v2 = ["body.md": "v2", "attachments/a.txt": "A"]
        let kept = try #require(
            try store.save(ExchangeKeepTests.tree(v2), to: item, options: SaveOptions(durability: .consistent, fileSystem: gated), keepingReplacedAs: .save).kept)

        #expect(reached.wait(timeout: .now() + 30) == .success, "the version is completed after the save returned")
        #expect(try texts(of: item) == v2)
        let waiting = try ExchangeKeepTests.hiddenEntries(library)
        #expect(waiting.count == 1 && waiting.first?.hasPrefix(".swap-") == true, "\(waiting)")
        #expect(!FileManager.default.fileExists(atPath: kept.url.path))

        // A listing in this process waits for the version rather than leaving it out.
        let listed = Mutex<[String]?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let ids = (try? store.versions(ofItemAt: item))?.others.map(\.persistentIdentifier)
            listed.withLock { $0 = ids ?? ["failed"] }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the listing went on while the version was incomplete")
        #expect(listed.withLock { $0 } == nil)
        gate.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(listed.withLock { $0 } == [kept.persistentIdentifier])
        #expect(try texts(of: kept.url) == Self.v1)
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
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
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        let kept = try #require(try Self.store(library).save(ExchangeKeepTests.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save).kept)
        // The default store of the same folder (another instance) lists it complete.
        let listing = try library.store().versions(ofItemAt: item)
        #expect(listing.problems.isEmpty)
        #expect(listing.others.map(\.persistentIdentifier) == [kept.persistentIdentifier])
        #expect(try texts(of: kept.url) == Self.v1)
    }

    @Test func pruningRunsAfterTheVersionIsComplete() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: Self.v1)
        // One version per 1,000 s: of versions made seconds apart, the newest only.
        let store = Self.store(library, pruning: PruningSchedule(bands: [PruningSchedule.Band(until: 86_400, interval: 1_000)]))
        for index in 2...9 {
            try store.save(ExchangeKeepTests.tree(["body.md": "v\(index)", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save)
        }
        store.waitForPendingVersions()
        let others = try store.versions(ofItemAt: item).others
        #expect(try others.map { try texts(of: $0.url)["body.md"] ?? "?" } == ["v8"])
        #expect(try ExchangeKeepTests.hiddenEntries(library).isEmpty)
    }
}
