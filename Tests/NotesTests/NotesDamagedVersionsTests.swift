import DocumentKitTesting
import Foundation
import Testing

/// `notes versions`, `restore` and `rm` on a note that can't be read, and on a library whose
/// version store's `store.json` is damaged: exactly when the versions are needed.
@Suite("notes versions, restore and rm of damaged notes", .timeLimit(.minutes(2)))
struct NotesDamagedVersionsTests {
    enum Damage: String, CaseIterable, Sendable {
        case truncatedManifest, garbageManifest, appendedMember
    }

    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-damaged-versions")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    var package: URL { notes.library.appendingPathComponent("trip.note") }

    /// “Trip” saved as `one`, `two`, `three`, then damaged.
    private func damagedTrip(_ damage: Damage) throws {
        try notes.ok(["new", "Trip", "--body", "one"])
        try notes.ok(["edit", "Trip", "--set", "two"])
        try notes.ok(["edit", "Trip", "--set", "three"])
        let manifest = package.appendingPathComponent("Info.json")
        switch damage {
        case .truncatedManifest:
            let data = try Data(contentsOf: manifest)
            try data.prefix(data.count / 2).write(to: manifest)
        case .garbageManifest:
            try Data("garbage\n".utf8).write(to: manifest)
        case .appendedMember:
            let handle = try FileHandle(forWritingTo: package.appendingPathComponent("body.json"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("\n".utf8))
            try handle.close()
        }
        #expect(try notes.run(["show", "Trip"]).status != 0)
    }

    private func others() throws -> [[String: Any]] {
        let listing = try #require(try notes.json(["versions", "Trip", "--json"]) as? [String: Any])
        return try #require(listing["others"] as? [[String: Any]])
    }

    /// Every member of every version the store keeps, as bytes.
    private func storedFiles() throws -> [Data] {
        let store = notes.library.appendingPathComponent(".documentkit-versions/documents")
        let enumerator = try #require(FileManager.default.enumerator(at: store, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { !$0.hasDirectoryPath && $0.pathComponents.contains("item") }
            .compactMap { try? Data(contentsOf: $0) }
    }

    @Test("versions lists and restore brings back the versions of a damaged note, keeping the damaged one", arguments: Damage.allCases)
    func versionsAndRestore(_ damage: Damage) throws {
        try damagedTrip(damage)
        let damagedFiles = try contents(ofPackage: package)
        let versions = try others()
        #expect(versions.count == 2)
        let oldest = try #require(versions.last?["id"] as? String)
        let restore = try notes.run(["restore", "Trip", oldest])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(try notes.ok(["show", "Trip"]) == "one\n")
        // Nothing is lost: the damaged note's files are in the store.
        let stored = try storedFiles()
        for (name, data) in damagedFiles { #expect(stored.contains(data), "the damaged \(name) is not kept") }
        #expect(try others().count == 3)
    }

    @Test("rm removes a damaged note and keeps its last state as a version", arguments: Damage.allCases)
    func removeDamaged(_ damage: Damage) throws {
        try damagedTrip(damage)
        let damagedFiles = try contents(ofPackage: package)
        let result = try notes.run(["rm", "Trip"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: package.path))
        let stored = try storedFiles()
        for (name, data) in damagedFiles { #expect(stored.contains(data), "the damaged \(name) is not kept") }
    }

    @Test("A damaged store.json is rebuilt: every note's versions stay listable and restorable")
    func damagedStoreDescription() throws {
        try notes.ok(["new", "Trip", "--body", "one"])
        try notes.ok(["edit", "Trip", "--set", "two"])
        try notes.ok(["new", "Todo", "--body", "milk"])
        try notes.ok(["edit", "Todo", "--set", "eggs"])
        let storeFile = notes.library.appendingPathComponent(".documentkit-versions/store.json")
        try Data("{\"format\": \"org.documentkit.version-st".utf8).write(to: storeFile)

        let todo = try #require(try notes.json(["versions", "Todo", "--json"]) as? [String: Any])
        let todoID = try #require((todo["others"] as? [[String: Any]])?.first?["id"] as? String)
        let trip = try others()
        #expect(trip.count == 1)
        try notes.ok(["restore", "Todo", todoID])
        #expect(try notes.ok(["show", "Todo"]) == "milk\n")
        try notes.ok(["restore", "Trip", try #require(trip.first?["id"] as? String)])
        #expect(try notes.ok(["show", "Trip"]) == "one\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: storeFile.deletingLastPathComponent().path)
        #expect(names.filter { $0.hasPrefix("store.json.damaged-") }.count == 1)
    }

    /// The package's files by name.
    private func contents(ofPackage url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            result[name] = try Data(contentsOf: url.appendingPathComponent(name))
        }
        return result
    }
}
