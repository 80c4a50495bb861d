import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A damaged store is reported entry by entry and skipped; it never stops anything else and
/// never touches the current item.
@Suite("Version store damage", .timeLimit(.minutes(2)))
struct VersionStoreDamageTests {
    enum Kind: String, Sendable, CaseIterable { case file, package }

    struct Damage: Sendable, CustomStringConvertible {
        var description: String
        /// Damages the version `entry` (its folder) in the document's `folder`; returns the path the problem must name.
        var apply: @Sendable (_ entry: URL, _ folder: URL) throws -> String
        /// Words the problem's detail must contain.
        var detail: String
        var code: DocumentKitError.Code
        /// Whether the damaged version itself is skipped (not for a stray name beside it).
        var skipsTheVersion = true
    }

    static let damages: [Damage] = [
        Damage(description: "record.json missing", apply: { entry, _ in
            let record = entry.appendingPathComponent("record.json")
            try FileManager.default.removeItem(at: record)
            return record.path
        }, detail: "missing", code: .corruptData),
        Damage(description: "record.json garbage", apply: { entry, _ in
            let record = entry.appendingPathComponent("record.json")
            try Data([0xFF, 0x00, 0x41, 0x7B, 0x0A]).write(to: record)
            return record.path
        }, detail: "not valid", code: .corruptData),
        Damage(description: "record.json truncated", apply: { entry, _ in
            let record = entry.appendingPathComponent("record.json")
            let data = try Data(contentsOf: record)
            try data.prefix(data.count / 2).write(to: record)
            return record.path
        }, detail: "not valid", code: .corruptData),
        Damage(description: "record.json names another version", apply: { entry, _ in
            let record = entry.appendingPathComponent("record.json")
            let text = try String(contentsOf: record, encoding: .utf8)
                .replacingOccurrences(of: entry.lastPathComponent, with: "20200101T000000Z-00000000deadbeef")
            try Data(text.utf8).write(to: record)
            return record.path
        }, detail: "20200101T000000Z-00000000deadbeef", code: .corruptData),
        Damage(description: "record.json of a newer record version 99", apply: { entry, _ in
            let record = entry.appendingPathComponent("record.json")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
            object["version"] = 99
            object["futureField"] = ["anything": true]
            try JSONSerialization.data(withJSONObject: object).write(to: record)
            return record.path
        }, detail: "99", code: .corruptData),
        Damage(description: "item gone", apply: { entry, _ in
            let item = entry.appendingPathComponent("item")
            try FileManager.default.removeItem(at: item)
            return item.path
        }, detail: "gone", code: .notFound),
        Damage(description: "a stray name in the document's folder", apply: { _, folder in
            let stray = folder.appendingPathComponent("Copy of something")
            try FileManager.default.createDirectory(at: stray, withIntermediateDirectories: false)
            try Data("x".utf8).write(to: stray.appendingPathComponent("record.json"))
            return stray.path
        }, detail: "not a version", code: .corruptData, skipsTheVersion: false),
    ]

    /// Writes contents number `index` at `url` (a file or a package), dated a minute apart.
    static func write(_ kind: Kind, _ index: Int, to url: URL, library: VersionLibrary) throws {
        switch kind {
        case .file: try Data("contents \(index)\n".utf8).write(to: url)
        case .package:
            try VersionLibrary.package(["body.md": "contents \(index)", "a/b.txt": "shared"], documentIdentifier: "DOC").write(to: url)
        }
        try library.setModified(url, fixedDate.addingTimeInterval(Double(index) * 60))
    }

    static func read(_ kind: Kind, _ url: URL) throws -> String {
        switch kind {
        case .file: try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .newlines)
        case .package: try texts(of: url)["body.md"] ?? "(no body)"
        }
    }

    @Test("A damaged entry is reported, skipped, and changes nothing else", arguments: damages, Kind.allCases)
    func damagedEntry(_ damage: Damage, kind: Kind) throws {
        let library = try VersionLibrary()
        let name = kind == .file ? "doc.txt" : "doc.note"
        let item = library.item(name)
        try Self.write(kind, 0, to: item, library: library)
        // One that looks at every entry each time, as every store does once its trust horizon ends.
        let store = library.store(trustHorizon: .zero)
        var ids: [String] = []
        for index in 1...3 {
            let source = library.item("source-\(index)")
            try Self.write(kind, index, to: source, library: library)
            ids.append(try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true).persistentIdentifier)
        }
        let itemBefore = try contents(of: item)
        let listed = try store.versions(ofItemAt: item)
        #expect(listed.others.map(\.persistentIdentifier) == ids.reversed())
        let damaged = try #require(listed.others.first { $0.persistentIdentifier == ids[1] })
        let entry = damaged.url.deletingLastPathComponent()
        let path = try damage.apply(entry, entry.deletingLastPathComponent())

        // A fresh store (as after a restart) lists what it can and names what is wrong.
        let listing = try library.store().versions(ofItemAt: item)
        #expect(listing.problems.count == 1)
        let problem = try #require(listing.problems.first)
        #expect(problem.path == path)
        #expect(problem.code == damage.code)
        #expect(problem.detail?.contains(damage.detail) == true, "\(problem.detail ?? "no detail")")
        #expect(problem.description.contains(path))
        let expected = damage.skipsTheVersion ? [ids[2], ids[0]] : ids.reversed()
        #expect(listing.others.map(\.persistentIdentifier) == expected)
        #expect(try listing.others.map { try Self.read(kind, $0.url) } == expected.map { id in "contents \(ids.firstIndex(of: id)! + 1)" })
        #expect(listing.current?.url == item)
        #expect(try contents(of: item) == itemBefore)

        // Adding still works, even the very contents of the damaged version (whose id is taken).
        let again = library.item("again")
        try Self.write(kind, 2, to: again, library: library)
        let readded = try store.addVersion(ofItemAt: item, withContentsOf: again)
        #expect(try Self.read(kind, readded.url) == "contents 2")
        let fresh = library.item("fresh")
        try Self.write(kind, 4, to: fresh, library: library)
        let added = try store.addVersion(ofItemAt: item, withContentsOf: fresh, byMoving: true)
        let after = try store.versions(ofItemAt: item)
        #expect(after.problems.map(\.path) == [path])
        #expect(after.others.first?.persistentIdentifier == added.persistentIdentifier)
        #expect(Set(after.others.map(\.persistentIdentifier)) == Set(expected + [added.persistentIdentifier, readded.persistentIdentifier]))
        #expect(try contents(of: item) == itemBefore)

        // Saving over the item keeps the replaced contents as before.
        let tree = kind == .file
            ? FileWrapper(regularFileWithContents: Data("contents 5\n".utf8))
            : try VersionLibrary.package(["body.md": "contents 5", "a/b.txt": "shared"], documentIdentifier: "DOC")
        let kept = try #require(store.save(tree, to: item, keepingReplacedAs: .save).kept)
        #expect(try Self.read(kind, kept.url) == "contents 0")
        #expect(try Self.read(kind, item) == "contents 5")
    }

    @Test func aStoreInANewerFormatIsRefusedAndLeftAloneAndAVersionedSaveFails() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("doc.txt", "current")
        let store = library.store()
        let kept = try store.addVersion(ofItemAt: item)
        let storeFile = library.storeURL.appendingPathComponent("store.json")
        let newer = Data("{\n  \"format\" : \"org.documentkit.version-store\",\n  \"version\" : 5,\n  \"shards\" : 16\n}\n".utf8)
        try newer.write(to: storeFile)
        func snapshot() throws -> [String: Data] { try contents(of: library.storeURL) }
        let storeBefore = try snapshot()

        let error = #expect(throws: DocumentKitError.self) { try library.store().versions(ofItemAt: item) }
        #expect(error?.code == .newerFormat)
        #expect(error?.path == storeFile.path)
        #expect(error?.detail?.contains("format 5") == true)
        #expect(throws: DocumentKitError.self) { try store.version(ofItemAt: item, withPersistentIdentifier: kept.persistentIdentifier) }
        let adding = #expect(throws: DocumentKitError.self) { try store.addVersion(ofItemAt: item) }
        #expect(adding?.code == .newerFormat)
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")
        #expect(store.currentVersion(ofItemAt: item)?.url == item)

        // A save that must keep the version it replaces can't: it fails, the item intact.
        let saving = #expect(throws: DocumentKitError.self) {
            try store.save(FileWrapper(regularFileWithContents: Data("saved".utf8)), to: item, keepingReplacedAs: .save)
        }
        #expect(saving?.code == .newerFormat)
        #expect(saving?.path == item.path)
        #expect(saving?.description.contains("store.json") == true)
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")
        #expect(try snapshot() == storeBefore)
        #expect(try Data(contentsOf: storeFile) == newer)
    }

    @Test func aStoreDescriptionThatIsNotOneIsReportedAsCorrupt() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("doc.txt", "current")
        try library.store().addVersion(ofItemAt: item)
        let storeFile = library.storeURL.appendingPathComponent("store.json")
        try Data("{\"format\": \"something.else\", \"version\": 1}".utf8).write(to: storeFile)
        let error = #expect(throws: DocumentKitError.self) { try library.store().versions(ofItemAt: item) }
        #expect(error?.code == .corruptData)
        #expect(error?.path == storeFile.path)
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")
    }

    @Test func leftoversOfAnInterruptedAddAreIgnoredAndClearedAtTheNextWriteHoweverYoung() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("doc.txt", "current")
        let store = library.store()
        let first = try store.addVersion(ofItemAt: item)
        let folder = first.url.deletingLastPathComponent().deletingLastPathComponent()
        let old = folder.appendingPathComponent(".new-abandoned1")
        let recent = folder.appendingPathComponent(".new-inprogress")
        for leftover in [old, recent] {
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: false)
            try Data("half".utf8).write(to: leftover.appendingPathComponent("item"))
        }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: old.path)
        let listing = try store.versions(ofItemAt: item)
        #expect(listing.problems.isEmpty)
        #expect(listing.others == [first])

        try library.writeFile("doc.txt", "second")
        try store.addVersion(ofItemAt: item)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        // No process holds the document's lock: nobody is building it (format 2: no age rule).
        #expect(!FileManager.default.fileExists(atPath: recent.path))
        #expect(try store.versions(ofItemAt: item).others.count == 2)
    }
}
