import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

/// A store reads `store.json` and each version's `record.json` once while they are unchanged
/// (issue #14: every open re-read and re-decoded them).
@Suite("Store file cache")
struct StoreFileCacheTests {
    @Test("listing versions again reads no record that is unchanged, and reads the entry of one that was replaced whole")
    func recordsReadOnce() throws {
        let library = try VersionLibrary()
        let item = library.item("a.txt")
        try library.writeFile("a.txt", "current")
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem, trustHorizon: .seconds(3_600))
        var ids: [String] = []
        ids += try library.addVersions(of: item, to: store, 0..<5).map(\.persistentIdentifier)
        usleep(100_000)  // older than the racy-timestamp margin
        #expect(try store.versions(ofItemAt: item).others.count == 5)
        faults.reset()
        let again = try store.versions(ofItemAt: item).others
        #expect(Set(again.map(\.persistentIdentifier)) == Set(ids))
        let reads = faults.trace.filter { $0.call == .read }
        #expect(reads.isEmpty, "\(reads)")

        // An entry never changes once named (format 3); one replaced whole (a new folder at its
        // name, as a sync engine may deliver it) is read again.
        let records = FileManager.default.enumerator(at: library.storeURL, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "record.json" } ?? []
        var recordURL = try #require(records.first { (try? String(contentsOf: $0, encoding: .utf8))?.contains(ids[2]) == true })
        let entry = recordURL.deletingLastPathComponent()
        let copy = entry.deletingLastPathComponent().appendingPathComponent(".copy")
        try FileManager.default.copyItem(at: entry, to: copy)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: recordURL)) as? [String: Any])
        json["host"] = "elsewhere"
        try JSONSerialization.data(withJSONObject: json).write(to: copy.appendingPathComponent("record.json"))
        try FileManager.default.removeItem(at: entry)
        #expect(rename(copy.path, entry.path) == 0)
        recordURL = entry.appendingPathComponent("record.json")
        faults.reset()
        let after = try store.versions(ofItemAt: item).others
        #expect(after.first { $0.persistentIdentifier == ids[2] }?.localizedNameOfSavingComputer == "elsewhere")
        let rereads = faults.trace.filter { $0.call == .read }
        #expect(!rereads.isEmpty && rereads.allSatisfy { $0.name == recordURL.path }, "\(rereads)")
    }

    @Test("the cache holds at most two generations of files; a file read again stays, files read once leave")
    func cacheIsBounded() throws {
        let cache = StoreFileCache(generationLimit: 100)
        let old = DigestClock.now() - 10_000_000_000
        func identity(_ index: Int) -> FileIdentity {
            FileIdentity(device: 1, inode: UInt64(index + 10), size: 10, modificationTime: old, changeTime: old)
        }
        cache.remember("kept", at: "/store/kept", identity: identity(-1), referenceTime: DigestClock.now())
        for index in 0..<1_000 {
            cache.remember("record \(index)", at: "/store/\(index)", identity: identity(index), referenceTime: DigestClock.now())
            // A file read on every open (store.json) is found each time and never leaves.
            #expect(cache.value(at: "/store/kept", identity: identity(-1), as: String.self) == "kept")
            #expect(cache.count <= 200)
        }
        #expect(cache.value(at: "/store/999", identity: identity(999), as: String.self) == "record 999")
        #expect(cache.value(at: "/store/0", identity: identity(0), as: String.self) == nil)
        // Another identity at the same path is not the remembered file.
        #expect(cache.value(at: "/store/kept", identity: identity(-2), as: String.self) == nil)
    }

    @Test("an entry found whole is looked at again once its trust horizon ends: a record's sync-conflict copy is removed, contents gone are a problem")
    func entriesAreCheckedAgainWhenTheyChange() async throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let horizon: Duration = .milliseconds(400)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, trustHorizon: horizon)
        var kept: [FileVersion] = []
        kept += try library.addVersions(of: item, to: store, 0..<3)
        usleep(100_000)  // older than the racy-timestamp margin: the entries are remembered
        #expect(try store.versions(ofItemAt: item).others.count == 3)
        #expect(try store.versions(ofItemAt: item).problems.isEmpty)

        // A sync engine's copy of a record, beside it: removed at the next listing.
        let entry = kept[0].url.deletingLastPathComponent()
        let copy = entry.appendingPathComponent("record.sync-conflict-20261127-120000-ABCDEFG.json")
        try FileManager.default.copyItem(at: entry.appendingPathComponent("record.json"), to: copy)
        try? await Task.sleep(for: horizon + .milliseconds(100))
        #expect(try store.versions(ofItemAt: item).others.count == 3)
        #expect(!FileManager.default.fileExists(atPath: copy.path))

        // A version whose contents went: a problem of the next listing, not a version.
        try FileManager.default.removeItem(at: kept[1].url)
        try? await Task.sleep(for: horizon + .milliseconds(100))
        let listing = try store.versions(ofItemAt: item)
        #expect(Set(listing.others.map(\.persistentIdentifier)) == Set([kept[0], kept[2]].map(\.persistentIdentifier)))
        #expect(listing.problems.contains { $0.code == .notFound && $0.path == kept[1].url.path }, "\(listing.problems)")
    }

    @Test("the sharing cache remembers at most its limit of documents")
    func sharingCacheIsBounded() {
        let cache = SharingCache(documentLimit: 8)
        for index in 0..<100 {
            cache.replace("id-\(index)", with: [:])
            cache.rememberPlaced("/store/id-\(index)/entry", of: "id-\(index)")
            #expect(cache.count <= 16)
        }
        #expect(cache.placedEntry(of: "id-99") == "/store/id-99/entry")
    }
}
