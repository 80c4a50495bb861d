@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import GRDB
import Testing

/// Members in a subfolder of a package (a note's `attachments/big.bin`): a sync engine delivers
/// them as it does any file, a temporary name in that subfolder renamed into place, which changes
/// neither the package folder nor the manifest. Found by the Syncthing test (NotesIndexSyncthingTests).
@Suite("Live index: members in a package's subfolder")
struct LiveNestedMemberTests {
    /// A package `photo.note` whose manifest lists `body.txt` and `attachments/big.bin`; the
    /// attachment is written only if `withAttachment`.
    func makePhoto(in library: IndexTestLibrary, withAttachment: Bool) throws -> URL {
        let package = library.url.appendingPathComponent("photo.note", isDirectory: true)
        try FileManager.default.createDirectory(at: package.appendingPathComponent("attachments"), withIntermediateDirectories: true)
        try Data("body".utf8).write(to: package.appendingPathComponent("body.txt"))
        if withAttachment { try Data("12345".utf8).write(to: package.appendingPathComponent("attachments/big.bin")) }
        let hash = String(repeating: "0", count: 64)
        let manifest = DocumentManifest(
            formatIdentifier: IndexTestLibrary.format, formatVersion: 1, writer: .init(name: "tests", version: "1"),
            documentIdentifier: UUID().uuidString,
            members: ["body.txt": MemberRecord(size: 4, sha256: hash), "attachments/big.bin": MemberRecord(size: 5, sha256: hash)],
            additionalFields: ["title": RawJSONValue(string: "Photo")])
        try manifest.jsonData().write(to: package.appendingPathComponent("Info.json"))
        return package
    }

    /// A library holding `photo.note` with its attachment, and an index of it, refreshed (the
    /// photo current).
    func indexedPhoto() async throws -> (IndexTestLibrary, URL, DocumentIndex) {
        let library = try IndexTestLibrary()
        let package = try makePhoto(in: library, withAttachment: true)
        let index = try DocumentIndex(library.configuration())
        try await index.refresh()
        #expect(await index.entry(atRelativePath: "photo.note")?.state == .current)
        return (library, package, index)
    }

    @Test("a member delivered into a package's subfolder (a temporary name renamed into place) makes the live entry current")
    func nestedMemberDelivered() async throws {
        let library = try IndexTestLibrary()
        let package = try makePhoto(in: library, withAttachment: false)
        var configuration = library.configuration()
        configuration.sweepInterval = .milliseconds(500)
        let index = try DocumentIndex(configuration)
        let (mirror, consumer) = LiveMirror.following(index.updates())
        defer { consumer.cancel() }
        try #require(await waitUntil { await mirror.hasGathered })
        guard case .incomplete? = await mirror.entries["photo.note"]?.state else {
            Issue.record("not incomplete: \(String(describing: await mirror.entries["photo.note"].map(describe)))")
            return
        }

        let temporary = package.appendingPathComponent("attachments/.syncthing.big.bin.tmp")
        try Data("12345".utf8).write(to: temporary)
        try FileManager.default.moveItem(at: temporary, to: package.appendingPathComponent("attachments/big.bin"))
        let current = await waitUntil(deadline: .seconds(6)) { await mirror.entries["photo.note"]?.state == .current }
        let state = await mirror.entries["photo.note"]?.state
        #expect(current, "the live index still says \(String(describing: state))")
        try await index.sync()
        #expect(differences(await index.entries, try await configuration.freshScan(), "index", "fresh") == [])
        await index.close()
    }

    @Test("a member removed from a package's subfolder makes the entry incomplete at the next refresh and restart")
    func nestedMemberRemoved() async throws {
        let (library, package, index) = try await indexedPhoto()
        let configuration = library.configuration()
        try FileManager.default.removeItem(at: package.appendingPathComponent("attachments/big.bin"))
        let fresh = try await configuration.freshScan()
        guard case .incomplete? = fresh.first?.state else { Issue.record("fresh scan: \(fresh.map(describe))"); return }
        // Neither the package folder's stamp nor the manifest's changed: the stamp of the
        // member folder `attachments` (document-index v3) shows it.
        try await index.refresh()
        #expect(differences(await index.entries, fresh, "refreshed", "fresh") == [])
        await index.close()
        let restarted = try DocumentIndex(configuration)
        try await restarted.refresh()
        #expect(differences(await restarted.entries, fresh, "restarted", "fresh") == [])
        await restarted.close()
    }

    @Test("an index of format version 2 (no member folder stamps) reads every entry again once: a member removed before the upgrade is seen")
    func versionTwoIndexReadsAgain() async throws {
        let (library, package, index) = try await indexedPhoto()
        let configuration = library.configuration()
        await index.close()
        // The file as version 2 wrote it, and the member removed while no index looked.
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: library.cache.url.path).first { $0.hasSuffix(".sqlite") })
        try await DatabaseQueue(path: library.cache.url.appendingPathComponent(file).path).write { db in
            try db.execute(sql: "ALTER TABLE entries DROP COLUMN memberFolders; PRAGMA user_version = 2")
        }
        try FileManager.default.removeItem(at: package.appendingPathComponent("attachments/big.bin"))
        let upgraded = try DocumentIndex(configuration)
        let notices = await upgraded.notices
        #expect(notices.isEmpty, "migrated, not rebuilt: \(notices)")
        try await upgraded.refresh()
        guard case .incomplete? = await upgraded.entry(atRelativePath: "photo.note")?.state else {
            Issue.record("after the upgrade: \(String(describing: await upgraded.entry(atRelativePath: "photo.note").map(describe)))")
            return
        }
        await upgraded.close()
    }

    @Test("the same while the index is live and the package watched: the sweep finds it incomplete")
    func nestedMemberRemovedLive() async throws {
        let library = try IndexTestLibrary()
        let package = try makePhoto(in: library, withAttachment: true)
        var configuration = library.configuration()
        configuration.sweepInterval = .milliseconds(300)
        let index = try DocumentIndex(configuration)
        let (mirror, consumer) = LiveMirror.following(index.updates())
        defer { consumer.cancel() }
        try #require(await waitUntil { await mirror.hasGathered })
        #expect(await mirror.entries["photo.note"]?.state == .current)
        try FileManager.default.removeItem(at: package.appendingPathComponent("attachments/big.bin"))
        let incomplete = await waitUntil(deadline: .seconds(6)) {
            if case .incomplete? = await mirror.entries["photo.note"]?.state { return true }
            return false
        }
        let state = await mirror.entries["photo.note"]?.state
        #expect(incomplete, "the live index still says \(String(describing: state))")
        await index.close()
    }

    @Test("a document's member folders: every folder above a listed member, once, sorted")
    func memberFolderPaths() {
        #expect(MemberFolderStamps.folders(holding: ["body.txt", "Info.json"]) == [])
        #expect(
            MemberFolderStamps.folders(holding: ["a/b/c.bin", "a/d.bin", "a/b/e.bin", "x/y.bin", "z.txt"])
                == ["a", "a/b", "x"])
        let stamps = MemberFolderStamps(
            paths: ["a", "a/ü"], stamps: [.none, FileStamp(device: 1, inode: 2, size: 3, modificationTime: 4, changeTime: 5)])
        #expect(MemberFolderStamps(blob: stamps.blob) == stamps)
        #expect(MemberFolderStamps(blob: Data())?.isUnknown == true)
        #expect(MemberFolderStamps(blob: stamps.blob.dropLast()) == nil)
    }
}
