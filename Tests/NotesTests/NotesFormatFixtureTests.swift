import DocumentKitTesting
import Foundation
import Testing

/// The frozen fixtures of `Formats/notes/` open with today's `notes`.
@Suite struct NotesFormatFixtureTests {
    static let fixtures = NotesRunner.formats.appendingPathComponent("v1/fixtures")

    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-fixtures")
        let library = directory.appending("Library")
        try FileManager.default.copyItem(at: Self.fixtures, to: library)
        notes = NotesRunner(library: library)
    }

    @Test("every version 1 fixture lists and shows")
    func version1FixturesOpen() throws {
        let list = try #require(try notes.json(["list", "--json"]) as? [[String: Any]])
        #expect(Set(list.compactMap { $0["title"] as? String }) == ["Trip to Lisbon", "Empty", "Ünïcødé & symbols!"])
        #expect(try notes.ok(["show", "Trip to Lisbon"]) == "Pack light.\nBook the tram to Belém.\n")
        #expect(try notes.ok(["show", "Empty"]) == "")
        #expect(try notes.ok(["show", "Ünïcødé & symbols!"]) == "日本語のメモ\nsecond line\n")
        let trip = try #require(try notes.json(["show", "Trip to Lisbon", "--json"]) as? [String: Any])
        #expect(trip["attachments"] as? [String] == ["ticket.txt"])
        #expect(trip["documentIdentifier"] as? String == "08413DAC-36FB-4749-A197-E7246D21F538")
    }

    @Test("editing a version 1 fixture keeps its identifier, creation date and attachment")
    func version1FixtureEdits() throws {
        let before = try #require(try notes.json(["show", "Trip to Lisbon", "--json"]) as? [String: Any])
        try notes.ok(["edit", "Trip to Lisbon", "--append", "Eat pastéis."])
        let after = try #require(try notes.json(["show", "Trip to Lisbon", "--json"]) as? [String: Any])
        #expect(after["documentIdentifier"] as? String == before["documentIdentifier"] as? String)
        #expect(after["created"] as? String == before["created"] as? String)
        #expect(after["attachments"] as? [String] == ["ticket.txt"])
        #expect((after["body"] as? String)?.hasSuffix("Eat pastéis.\n") == true)
    }
}
