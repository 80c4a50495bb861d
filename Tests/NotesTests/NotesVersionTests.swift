import DocumentKitTesting
import Foundation
import Testing

/// The three versions of the notes format: what each fixture holds, `check`, `migrate`, and
/// `--reader-version`.
@Suite struct NotesVersionTests {
    static let formats = NotesRunner.formats

    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-versions")
        notes = NotesRunner(library: directory.appending("Library"))
        try FileManager.default.createDirectory(at: notes.library, withIntermediateDirectories: true)
    }

    /// Copies fixtures (`v2/fixtures/groceries.note`, …) into the library.
    private func add(_ fixtures: String...) throws {
        for fixture in fixtures {
            let source = Self.formats.appendingPathComponent(fixture)
            try FileManager.default.copyItem(at: source, to: notes.library.appendingPathComponent(source.lastPathComponent))
        }
    }

    private func details(_ title: String, readerVersion: Int = 3) throws -> [String: Any] {
        try #require(try notes.json(["show", title, "--json", "--reader-version", "\(readerVersion)"]) as? [String: Any])
    }

    @Test("the version 2 and 3 fixtures show their bodies, tags and attachment metadata")
    func laterFixturesOpen() throws {
        try add("v2/fixtures/receipt.note", "v2/fixtures/trip-to-lisbon.note", "v3/fixtures/packing-list.note", "v3/fixtures/blank.note")
        #expect(try notes.ok(["show", "Packing list"]) == "# Packing list\n- [x] Passport\n- [ ] Sunscreen\nOne bag only.\n")
        #expect(try notes.ok(["show", "Blank"]) == "")
        let packing = try details("Packing list")
        #expect(packing["tags"] as? [String] == ["travel", "summer"] && packing["formatVersion"] as? Int == 3)
        #expect((packing["attachmentInfo"] as? [String: [String: String]])?["map.png"]?["mediaType"] == "image/png")
        let receipt = try details("Receipt")
        #expect(receipt["tags"] as? [String] == ["taxes"] && receipt["formatVersion"] as? Int == 2)
        #expect(receipt["body"] as? String == "Paid in cash.")
        #expect((receipt["attachmentInfo"] as? [String: [String: String]])?["receipt.pdf"]?["added"] != nil)
        let trip = try details("Trip to Lisbon", readerVersion: 2)
        #expect(trip["tags"] as? [String] == [] && trip["attachments"] as? [String] == ["ticket.txt"])
        #expect((trip["attachmentInfo"] as? [String: [String: String]])?["ticket.txt"] == ["mediaType": "text/plain"])
    }

    @Test("the reader of format 1 shows a format 2 note without its tags, and its edit keeps them")
    func version1ReaderKeepsTags() throws {
        try add("v2/fixtures/receipt.note")
        let asVersion1 = try details("Receipt", readerVersion: 1)
        #expect(asVersion1["tags"] == nil && asVersion1["attachments"] as? [String] == ["receipt.pdf"])
        let metadata = try Data(contentsOf: notes.library.appendingPathComponent("receipt.note/attachments.json"))
        try notes.ok(["edit", "Receipt", "--append", "Filed.", "--reader-version", "1"])
        let after = try details("Receipt", readerVersion: 2)
        #expect(after["tags"] as? [String] == ["taxes"] && after["formatVersion"] as? Int == 2)
        #expect(after["body"] as? String == "Paid in cash.\nFiled.\n")
        #expect(try Data(contentsOf: notes.library.appendingPathComponent("receipt.note/attachments.json")) == metadata)
    }

    @Test("check says how each note opens, names what is wrong, and exits 65 when a note can't be opened")
    func checkReportsEveryNote() throws {
        try add("v1/fixtures/empty.note", "v3/fixtures/packing-list.note", "future/v4-higher-min-writer.note", "damaged/wrong-hash.note")
        let before = try snapshot(notes.library)
        let result = try notes.run(["check", "--json"])
        #expect(result.status == 65)
        let checks = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let outcomes = Dictionary(uniqueKeysWithValues: checks.map { ($0["package"] as? String ?? "", $0["outcome"] as? String ?? "") })
        #expect(outcomes == [
            "empty.note": "migrated", "packing-list.note": "read-write", "v4-higher-min-writer.note": "read-only",
            "wrong-hash.note": "refused",
        ])
        let wrong = try #require(checks.first { $0["package"] as? String == "wrong-hash.note" })
        #expect((wrong["message"] as? String)?.contains("0 of 1 members match") == true && wrong["problem"] as? String == "incompletePackage")
        let packing = try #require(checks.first { $0["package"] as? String == "packing-list.note" })
        #expect((packing["members"] as? [String: Any])?["matching"] as? Int == 3)
        #expect(try snapshot(notes.library) == before, "check wrote to the library")
        // The v3 and v4 fixtures are states of one note: in one library they are copies sharing a
        // document identifier, which check reports (exit 65) and --fix settles: the copy this app
        // can't change (format 4) keeps the identifier, the other gets one of its own.
        let shared = try notes.run(["check", "Packing list"])
        #expect(shared.status == 65 && shared.stdout.contains("v4-higher-min-writer.note too"), "\(shared.stdout)")
        let fixed = try notes.run(["check", "--fix"])
        #expect(fixed.stdout.contains("packing-list.note: now has a document identifier of its own"), "\(fixed.stdout) \(fixed.stderr)")
        // One note by title, in human form; the exit status says it is fine.
        let one = try notes.run(["check", "Packing list"])
        #expect(one.status == 0 && one.stdout.contains("packing-list.note: read-write") && one.stdout.contains("3 of 3 members match"), "\(one.stdout)")
    }

    @Test("migrate writes older notes in format 3, keeping text, tags and attachments, and the original as a version")
    func migrateUpgradesOlderNotes() throws {
        try add("v1/fixtures/trip-to-lisbon.note", "v2/fixtures/groceries.note", "v3/fixtures/blank.note")
        let result = try notes.run(["migrate"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Upgraded “Trip to Lisbon” (trip-to-lisbon.note) from format 1 to format 3"))
        #expect(result.stdout.contains("from format 2 to format 3") && result.stdout.contains("“Blank” (blank.note) is in format 3 already"))
        #expect(result.stdout.contains("The format-1 original is kept as a version: `notes versions \"Trip to Lisbon\"`"))
        let trip = notes.library.appendingPathComponent("trip-to-lisbon.note")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trip.path).sorted() == ["Info.json", "attachments", "attachments.json", "body.json"])
        #expect(try notes.ok(["show", "Trip to Lisbon"]) == "Pack light.\nBook the tram to Belém.\n")
        #expect(try details("Groceries")["tags"] as? [String] == ["shopping", "weekly"])
        let check = try #require(try notes.json(["check", "--json"]) as? [[String: Any]])
        #expect(check.allSatisfy { $0["outcome"] as? String == "read-write" && $0["formatVersion"] as? Int == 3 })
        // The original is that version, in format 1; the help says so too.
        let versions = try #require(try notes.json(["versions", "Trip to Lisbon", "--json"]) as? [String: Any])
        let original = try #require((versions["others"] as? [[String: Any]])?.first?["id"] as? String)
        let old = try #require(try notes.json(["show", "Trip to Lisbon", "--version", original, "--json"]) as? [String: Any])
        #expect(old["formatVersion"] as? Int == 1 && old["body"] as? String == "Pack light.\nBook the tram to Belém.")
        #expect(try notes.run(["migrate", "--help"], useLibraryFlag: false).stdout.contains("kept as a version"))
    }

    @Test("as the reader of format 1, notes writes format 1 and refuses tags; the reader version must be 1 to 3")
    func readerVersionOption() throws {
        try notes.ok(["new", "Old style", "--body", "text", "--reader-version", "1"])
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: notes.library.appendingPathComponent("old-style.note/Info.json")))
                as? [String: Any])
        #expect(manifest["formatVersion"] as? Int == 1 && manifest["tags"] == nil)
        #expect((manifest["writer"] as? [String: String])?["version"] == "0.1.0")
        let tags = try notes.run(["new", "Tagged", "--tag", "x", "--reader-version", "1"])
        #expect(tags.status == 64 && tags.stderr.contains("tags need format 2 or later"))
        #expect(try notes.run(["list", "--reader-version", "4"]).status == 64)
        #expect(try notes.run(["list", "--reader-version", "0"]).status == 64)
    }

    @Test("an edit of an older note writes it in the new format and says so on stderr")
    func editUpgradesAndSaysSo() throws {
        try add("v1/fixtures/empty.note")
        let result = try notes.run(["edit", "Empty", "--append", "first line"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("now in format 3 (it was in format 1)") && result.stderr.contains("original is kept as a version"))
        #expect((try #require(try notes.json(["versions", "Empty", "--json"]) as? [String: Any])["others"] as? [Any])?.count == 1)
        #expect(try details("Empty")["formatVersion"] as? Int == 3)
    }

    /// Every regular file under `url`, by relative path, with its bytes.
    private func snapshot(_ url: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = enumerator?.nextObject() as? URL {
            guard try item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            files[item.path] = try Data(contentsOf: item)
        }
        return files
    }
}
