@testable import DocumentIndexing
import DocumentKit
import Foundation
import GRDB
import Testing

/// The frozen fixtures of `Formats/document-index/v1`, `v2` and `v3`.
@Suite("Index format")
struct IndexFormatTests {
    static let formats = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Formats/document-index")
    static let folder = formats.appendingPathComponent("v1")
    static let folder2 = formats.appendingPathComponent("v2")
    static let folder3 = formats.appendingPathComponent("v3")
    static let libraryURL = URL(fileURLWithPath: "/library", isDirectory: true)

    /// The records the fixture holds.
    static var fixtureRecords: [EntryRecord] {
        let stamp = FileStamp(device: 2049, inode: 1001, size: 4096, modificationTime: 1_700_000_000_123_456_789, changeTime: 1_700_000_000_123_456_789)
        var manifest = stamp
        manifest.inode = 1002
        manifest.size = 321
        func entry(_ path: String, _ identifier: String?, _ key: String?, _ state: IndexEntry.State) -> IndexEntry {
            IndexEntry(
                libraryURL: libraryURL, relativePath: path, documentIdentifier: identifier,
                formatIdentifier: identifier == nil ? nil : "org.documentkit.test.note", formatVersion: identifier == nil ? nil : 1,
                key: key, fields: key.map { ["title": RawJSONValue(string: $0), "tags": try! RawJSONValue(jsonText: "[\"a\",\"b\"]")] } ?? [:],
                modificationDate: Date(timeIntervalSince1970: Double(manifest.modificationTime) / 1e9), state: state)
        }
        return [
            EntryRecord(entry: entry("Plan.note", "7E57A1D0-0000-4000-8000-000000000001", "Plan", .current), package: stamp, manifest: manifest, conflicts: nil),
            EntryRecord(entry: entry("Work/Half.note", "7E57A1D0-0000-4000-8000-000000000002", "Half", .incomplete("0 of 1 members match; body.txt is missing.")), package: stamp, manifest: manifest, conflicts: nil),
            EntryRecord(entry: entry("Work/Both.note", "7E57A1D0-0000-4000-8000-000000000003", "Both", .unresolvedConflicts(2)), package: stamp, manifest: manifest, conflicts: stamp),
            EntryRecord(entry: entry("New.note", "7E57A1D0-0000-4000-8000-000000000004", "New", .tooNew(3)), package: stamp, manifest: manifest, conflicts: nil),
            EntryRecord(entry: entry("Bad.note", nil, nil, .damaged("/library/Bad.note/Info.json: The manifest is malformed.")), package: stamp, manifest: manifest, conflicts: nil),
        ]
    }

    /// The records of the v3 fixture: those of v1 and v2, and a package with members in two
    /// subfolders (`attachments` and `attachments/photos`), whose stamps v3 keeps.
    static var fixtureRecords3: [EntryRecord] {
        let plan = fixtureRecords[0]
        var entry = plan.entry
        entry.relativePath = "Photo.note"
        entry.documentIdentifier = "7E57A1D0-0000-4000-8000-000000000005"
        entry.key = "Photo"
        entry.fields = ["title": RawJSONValue(string: "Photo"), "tags": try! RawJSONValue(jsonText: "[\"a\",\"b\"]")]
        var photo = EntryRecord(entry: entry, package: plan.package, manifest: plan.manifest, conflicts: nil)
        var attachments = folderStamp
        attachments.inode = 1003
        var photos = folderStamp
        photos.inode = 1004
        photo.memberFolders = MemberFolderStamps(paths: ["attachments", "attachments/photos"], stamps: [attachments, photos])
        return fixtureRecords + [photo]
    }

    /// What today's code reads of the fixture of `version`: the entries of v1 and v2 come with
    /// member folders not known (they are read again once).
    static func expectedRecords(version: Int) -> [EntryRecord] {
        guard version <= 2 else { return fixtureRecords3 }
        return fixtureRecords.map { record in
            var record = record
            record.memberFolders = .unknown
            return record
        }
    }

    /// The stamp of the fixtures' folders.
    static let folderStamp = FileStamp(
        device: 2049, inode: 2, size: 4096, modificationTime: 1_700_000_000_000_000_000, changeTime: 1_700_000_000_000_000_000)
    /// The stamp at which the v2 fixture's top folder was accounted for.
    static let accountedStamp = FileStamp(
        device: 2049, inode: 2, size: 4096, modificationTime: 1_700_000_001_000_000_000, changeTime: 1_700_000_001_000_000_000)

    @Test("generates the v3 fixture (only with DOCUMENTKIT_WRITE_INDEX_FIXTURE set: fixtures are frozen)",
        .enabled(if: ProcessInfo.processInfo.environment["DOCUMENTKIT_WRITE_INDEX_FIXTURE"] != nil))
    func generate() throws {
        let path = Self.folder3.appendingPathComponent("index.sqlite").path
        guard !FileManager.default.fileExists(atPath: path) else { return }  // frozen: made once, never again
        IndexDatabase.remove(at: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: IndexSchema.creation)
            for (name, value) in [
                ("format", IndexSchema.formatIdentifier), ("libraryPath", "/library"), ("libraryDevice", "2049"), ("libraryInode", "2"),
                ("configuration", "note\u{1}Info.json\u{1}org.documentkit.test.note\u{1}1\u{1}title\u{1}title,tags"),
                ("indexID", "7E57A1D0-0000-4000-8000-0000000000FF"), ("sequence", "5"), ("built", "1"),
            ] {
                try db.execute(sql: "INSERT INTO meta (name, value) VALUES (?, ?)", arguments: [name, value])
            }
            for record in Self.fixtureRecords3 { try IndexDatabase.upsert(record, in: db) }
            for folder in ["", "Work"] {
                try db.execute(sql: "INSERT INTO folders (path, stamp) VALUES (?, ?)", arguments: [folder, Self.folderStamp.blob])
            }
            try db.execute(sql: "INSERT INTO accounted (path, stamp) VALUES (?, ?)", arguments: ["", Self.accountedStamp.blob])
        }
        try queue.close()
    }

    @Test("today's code reads the v1, v2 and v3 fixtures' entries, states, stamps and lookups (v1 and v2 migrated in place)", arguments: [1, 2, 3])
    func readsTheFixture(version: Int) throws {
        let fixture = [Self.folder, Self.folder2, Self.folder3][version - 1].appendingPathComponent("index.sqlite").path
        // A copy: opening may touch the file (WAL), and fixtures are never changed.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("index-fixture-\(UUID().uuidString).sqlite").path
        try FileManager.default.copyItem(atPath: fixture, toPath: copy)
        defer { IndexDatabase.remove(at: copy) }
        let identity = IndexDatabase.Identity(
            library: .init(realPath: "/library", device: 2049, inode: 2),
            configuration: "note\u{1}Info.json\u{1}org.documentkit.test.note\u{1}1\u{1}title\u{1}title,tags")
        let database = try IndexDatabase(path: copy, identity: identity)
        #expect(try database.isBuilt())
        let records = try database.records(sql: "ORDER BY path", libraryURL: Self.libraryURL)
        #expect(records == Self.expectedRecords(version: version).sorted { $0.entry.relativePath < $1.entry.relativePath })
        #expect(try database.records(sql: "WHERE keyFolded = ?", arguments: ["both"], libraryURL: Self.libraryURL).map(\.entry.relativePath) == ["Work/Both.note"])
        #expect(try database.folders() == ["": Self.folderStamp, "Work": Self.folderStamp])
        #expect(try database.accounted() == (version == 1 ? [:] : ["": Self.accountedStamp]))
        #expect(try database.meta("sequence") == "5")
        #expect(try database.queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == IndexSchema.version)
    }

    @Test("the schemas of v1, v2 and of today's code (v3) are the fixtures' (a change is a new format version)", arguments: [1, 2, 3])
    func schemaIsFrozen(version: Int) throws {
        let folder = [Self.folder, Self.folder2, Self.folder3][version - 1]
        let fixture = try DatabaseQueue(path: folder.appendingPathComponent("index.sqlite").path, configuration: {
            var configuration = GRDB.Configuration()
            configuration.readonly = true
            return configuration
        }())
        let fresh = try DatabaseQueue()
        let schema = [IndexSchema.version1, IndexSchema.version1 + IndexSchema.migrationFrom1, IndexSchema.creation][version - 1]
        try fresh.write { try $0.execute(sql: schema) }
        let sql = "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name"
        #expect(try fixture.read { try String.fetchAll($0, sql: sql) } == fresh.read { try String.fetchAll($0, sql: sql) })
        #expect(try fixture.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == version)
    }
}
