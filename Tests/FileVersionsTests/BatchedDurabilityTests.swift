import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// `Durability.durableBatched` in the version store: a versioned package save flushes four times
/// (three `syncfs`, one `fsync` of the package's folder), each where order matters.
@Suite("Batched durability of the version store")
struct BatchedDurabilityTests {
    @Test("a batched versioned package save flushes the kept version before naming it and before the swap, four flushes in all")
    func versionedSaveFlushesFourTimes() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("Trip.pkg", ["body.md": "first", "Info.json": "{}", "attachments/a.txt": "a"])
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durableBatched, fileSystem: faults.fileSystem)
        let options = SaveOptions(durability: .durableBatched, fileSystem: faults.fileSystem)
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("second".utf8))
        _ = try store.save(tree, to: item, options: options, keepingReplacedAs: .save)  // creates the store
        tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("third".utf8))
        faults.reset()
        let kept = try #require(try store.save(tree, to: item, options: options, keepingReplacedAs: .save).kept)

        let trace = faults.trace
        let calls = trace.map(\.call)
        #expect(!calls.contains(.synchronize), "\(trace)")
        #expect(calls.filter { $0 == .synchronizeFileSystem }.count == 3, "\(trace)")
        #expect(calls.filter { $0 == .synchronizeDirectory }.count == 1, "\(trace)")
        // 1. Contents and record on disk before the record is named; 2. the record's and the
        // entry's names before the package is swapped; 3. the new package before the swap.
        let flushes = calls.indices.filter { calls[$0] == .synchronizeFileSystem }
        let recordNamed = try #require(trace.firstIndex { $0.call == .rename && $0.name.contains("record.json") })
        let swap = try #require(calls.firstIndex(of: .exchange))
        let entryNamed = try #require(trace.firstIndex { $0.call == .rename && $0.name.contains("/documents/") })
        #expect(flushes[0] < recordNamed && recordNamed < entryNamed && entryNamed < flushes[1] && flushes[2] < swap, "\(trace)")
        #expect(try texts(of: kept.url)["body.md"] == "second")
        #expect(try texts(of: item)["body.md"] == "third")
    }

    @Test("a batched versioned save whose first file system flush fails is no save: the package is as it was, no version is named")
    func failedFlushKeepsTheItemAndNamesNoVersion() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("Trip.pkg", ["body.md": "first", "Info.json": "{}"])
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durableBatched, fileSystem: faults.fileSystem)
        let options = SaveOptions(durability: .durableBatched, fileSystem: faults.fileSystem)
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("second".utf8))
        faults.fail(.synchronizeFileSystem, with: .ioError, once: true)
        #expect(throws: DocumentKitError.self) { try store.save(tree, to: item, options: options, keepingReplacedAs: .save) }
        #expect(try texts(of: item)["body.md"] == "first")
        #expect(try store.otherVersions(ofItemAt: item).isEmpty)
        let leftovers = library.documentFolders().flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(".new-") }
        }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
