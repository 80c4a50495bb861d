import DocumentKitTesting
import Foundation
import Testing

@Suite struct NotesCommandTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-cli")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    @Test("init creates the library folder, and list on a missing library exits 66")
    func initAndMissingLibrary() throws {
        #expect(FileManager.default.fileExists(atPath: notes.library.path))
        let missing = NotesRunner(library: directory.appending("Nowhere"))
        let result = try missing.run(["list"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("Nowhere"))
    }

    @Test("new, then list --json shows title, path and modified")
    func newAndList() throws {
        let path = try notes.ok(["new", "Trip to Lisbon", "--body", "Pack light."]).trimmingCharacters(in: .newlines)
        #expect(path.hasSuffix("trip-to-lisbon.note"))
        try notes.ok(["new", "Groceries"])
        let list = try #require(try notes.json(["list", "--json"]) as? [[String: Any]])
        #expect(list.map { $0["title"] as? String } == ["Groceries", "Trip to Lisbon"])
        #expect(list.allSatisfy { $0["path"] is String && $0["modified"] is String })
        #expect((list[1]["path"] as? String) == path)
    }

    @Test("--body - and --set - read standard input")
    func standardInput() throws {
        try notes.ok(["new", "Poem", "--body", "-"], input: "Roses\nare red\n")
        #expect(try notes.ok(["show", "Poem"]) == "Roses\nare red\n")
        try notes.ok(["edit", "Poem", "--set", "-"], input: "Violets\n")
        #expect(try notes.ok(["show", "Poem"]) == "Violets\n")
    }

    @Test("edit --append adds a line; --set replaces the body")
    func editBody() throws {
        try notes.ok(["new", "List", "--body", "one"])
        try notes.ok(["edit", "List", "--append", "two"])
        try notes.ok(["edit", "List", "--append", "three"])
        #expect(try notes.ok(["show", "List"]) == "one\ntwo\nthree\n")
        try notes.ok(["edit", "List", "--set", "fresh"])
        #expect(try notes.ok(["show", "List"]) == "fresh\n")
    }

    @Test("edit with both or neither of --set and --append is a usage error (64)")
    func editUsage() throws {
        try notes.ok(["new", "X"])
        #expect(try notes.run(["edit", "X", "--set", "a", "--append", "b"]).status == 64)
        #expect(try notes.run(["edit", "X"]).status == 64)
    }

    @Test("show --json adds the metadata")
    func showJSON() throws {
        try notes.ok(["new", "Trip", "--body", "Body text"])
        let details = try #require(try notes.json(["show", "Trip", "--json"]) as? [String: Any])
        #expect(details["title"] as? String == "Trip")
        #expect(details["body"] as? String == "Body text")
        #expect(details["formatVersion"] as? Int == 3)
        #expect(details["tags"] as? [String] == [] && details["readOnly"] as? Bool == false)
        #expect(UUID(uuidString: details["documentIdentifier"] as? String ?? "") != nil)
        #expect(details["modified"] is String && details["created"] is String && details["path"] is String)
    }

    @Test("a missing note exits 66 with one line naming it")
    func missingNote() throws {
        let result = try notes.run(["show", "Nope"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("Nope"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stdout.isEmpty)
    }

    @Test("attach copies files in; a missing file exits 66 naming it")
    func attach() throws {
        try notes.ok(["new", "Trip"])
        let photo = directory.appending("photo.jpg")
        try Data(repeating: 7, count: 10_000).write(to: photo)
        try notes.ok(["attach", "Trip", photo.path])
        let details = try #require(try notes.json(["show", "Trip", "--json"]) as? [String: Any])
        #expect(details["attachments"] as? [String] == ["photo.jpg"])
        let stored = notes.library.appendingPathComponent("trip.note/attachments/photo.jpg")
        #expect(try Data(contentsOf: stored) == Data(repeating: 7, count: 10_000))
        // A copy, not a link: changing the original does not change the note.
        try Data("changed".utf8).write(to: photo)
        #expect(try Data(contentsOf: stored).count == 10_000)
        let missing = try notes.run(["attach", "Trip", directory.appending("absent.png").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("absent.png"))
    }

    @Test("rm deletes the note and leaves nothing behind but its last state in the version store")
    func remove() throws {
        try notes.ok(["new", "Temp"])
        try notes.ok(["rm", "Temp"])
        #expect(try notes.run(["show", "Temp"]).status == 66)
        #expect(try FileManager.default.contentsOfDirectory(atPath: notes.library.path) == [".documentkit-versions"])
    }

    @Test("mv renames the note and its package; a taken title exits 73")
    func move() throws {
        try notes.ok(["new", "Old name", "--body", "kept"])
        try notes.ok(["new", "Other"])
        try notes.ok(["mv", "Old name", "New name"])
        #expect(try notes.ok(["show", "New name"]) == "kept\n")
        #expect(FileManager.default.fileExists(atPath: notes.library.appendingPathComponent("new-name.note").path))
        #expect(!FileManager.default.fileExists(atPath: notes.library.appendingPathComponent("old-name.note").path))
        #expect(try notes.run(["mv", "New name", "Other"]).status == 73)
        #expect(try notes.run(["new", "Other"]).status == 73)
    }

    @Test("the library comes from --library, else NOTES_LIBRARY")
    func libraryResolution() throws {
        let other = directory.appending("FromEnvironment")
        let viaEnvironment = try notes.run(["init"], useLibraryFlag: false, environment: ["NOTES_LIBRARY": other.path])
        #expect(viaEnvironment.status == 0)
        #expect(FileManager.default.fileExists(atPath: other.path))
        _ = try notes.run(["new", "Env note"], useLibraryFlag: false, environment: ["NOTES_LIBRARY": other.path])
        #expect(FileManager.default.fileExists(atPath: other.appendingPathComponent("env-note.note").path))
        #expect(try notes.run(["show", "Env note"]).status == 66)  // not in the --library one
    }

    @Test("tour runs to the end on a temporary library")
    func tour() throws {
        let result = try notes.run(["tour"], useLibraryFlag: false)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("hard-linked"))
        #expect(result.stdout.contains("(same file: linked)"))
        #expect(result.stdout.contains("leftovers now: 0"))
        #expect(result.stdout.contains("trip-to-lisbon.note → Imported/trip-to-lisbon.note"))
        #expect(result.stdout.contains("extracting the entry “../escaped.txt”"))
    }
}
