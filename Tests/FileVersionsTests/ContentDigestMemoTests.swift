import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

/// `contentDigest(ofItemAt:)` of a package reads its manifest once while it is unchanged (a
/// `PUT` of `notes serve` asked five times), where change times are exact; any change to the
/// manifest, even one that keeps its size and modification time, is seen at once.
@Suite("Content digest memory")
struct ContentDigestMemoTests {
    @Test("an unchanged manifest is not read again; one rewritten in place with its size and time kept, or replaced, is")
    func rereadsOnlyWhatChanged() throws {
        let library = try VersionLibrary()
        let package = try library.writePackage("p.pkg", ["body.txt": "one"], documentIdentifier: UUID().uuidString)
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem)
        let manifest = package.appendingPathComponent("Info.json")
        func manifestReads() -> Int { faults.trace.filter { $0.call == .open && $0.name == manifest.path }.count }

        try store.addVersion(ofItemAt: package, origin: .added)
        // A count probes the store's file system (a digest never does).
        let exact = store.exactChangeTimes.inStore(at: library.storeURL, using: FileSystem.live)
        let first = try #require(store.contentDigest(ofItemAt: package))
        faults.reset()
        #expect(store.contentDigest(ofItemAt: package) == first)
        #expect(manifestReads() == (exact ? 0 : 1), "exact change times: \(exact); \(faults.trace)")

        // Rewritten in place, same size, its modification time set back: another digest at once.
        let original = try Data(contentsOf: manifest)
        let attributes = try FileManager.default.attributesOfItem(atPath: manifest.path)
        var edited = original
        let index = try #require(edited.firstIndex(of: UInt8(ascii: "1")) ?? edited.firstIndex(of: UInt8(ascii: "0")))
        edited[index] = edited[index] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        let handle = try FileHandle(forWritingTo: manifest)
        try handle.write(contentsOf: edited)
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: manifest.path)
        let rewritten = store.contentDigest(ofItemAt: package)
        #expect(rewritten != nil && rewritten != first)
        #expect(rewritten == Digest.sha256(edited))

        // Replaced by another file (a save's swap): read again.
        try original.write(to: manifest, options: .atomic)
        #expect(store.contentDigest(ofItemAt: package) == first)

        // A member of another size than the manifest records: no digest, remembered or not.
        #expect(store.contentDigest(ofItemAt: package) == first)
        try Data("longer".utf8).write(to: package.appendingPathComponent("body.txt"))
        #expect(store.contentDigest(ofItemAt: package) == nil)
    }

    @Test("a package on another device than the store, or a store not probed yet, reads its manifest at every call")
    func otherDeviceIsNotRemembered() throws {
        let library = try VersionLibrary()
        let package = try library.writePackage("p.pkg", ["body.txt": "one"], documentIdentifier: UUID().uuidString)
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem)
        let manifest = package.appendingPathComponent("Info.json").path
        func manifestReads() -> Int { faults.trace.filter { $0.call == .open && $0.name == manifest }.count }
        let device = try #require(UInt64(exactly: try status(manifest).st_dev))
        for (exact, storeDevice) in [(false, nil), (true, device &+ 1)] as [(Bool, UInt64?)] {
            if exact { store.exactChangeTimes.assume(exact: true, device: storeDevice) }
            faults.reset()
            let digests = (0..<3).map { _ in store.contentDigest(ofItemAt: package) }
            #expect(digests.allSatisfy { $0 != nil && $0 == digests[0] })
            #expect(manifestReads() == 3, "\(faults.trace)")
        }
        // Taken as exact on its device: read once.
        store.exactChangeTimes.assume(exact: true, device: device)
        faults.reset()
        for _ in 0..<3 { _ = store.contentDigest(ofItemAt: package) }
        #expect(manifestReads() == 1, "\(faults.trace)")
    }
}
