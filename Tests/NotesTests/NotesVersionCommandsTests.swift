import DocumentKitTesting
import Foundation
import Testing

/// `notes versions`, `show --version`, `restore`, `conflicts` and `resolve`, run as a user would,
/// with conflicts made the way a sync engine makes them: conflict copies of a note's members.
@Suite struct NotesVersionCommandsTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-version-commands")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    private func versions(_ title: String) throws -> [String: Any] {
        try #require(try notes.json(["versions", title, "--json"]) as? [String: Any])
    }

    private func others(_ title: String) throws -> [[String: Any]] {
        try #require(try versions(title)["others"] as? [[String: Any]])
    }

    /// `trip.note` edited here to `ours` and, in a copy of the library synchronised file by file,
    /// to `theirs`: the copy's body and manifest arrive as Syncthing conflict copies inside the note.
    private func makeConflict(base: String, ours: String, theirs: String, stamp: String = "20261122-101500") throws {
        try notes.ok(["new", "Trip", "--body", base])
        let other = NotesRunner(library: directory.appending("Other-\(stamp)"))
        try other.ok(["init"])
        let package = notes.library.appendingPathComponent("trip.note")
        try FileManager.default.copyItem(at: package, to: other.library.appendingPathComponent("trip.note"))
        try notes.ok(["edit", "Trip", "--set", ours])
        try other.ok(["edit", "Trip", "--set", theirs])
        try plantCopies(from: other, stamp: stamp)
    }

    /// Copies `other`'s `trip.note` body and manifest into this library's note as conflict copies.
    private func plantCopies(from other: NotesRunner, stamp: String) throws {
        let package = notes.library.appendingPathComponent("trip.note")
        for (member, copy) in [("body.json", "body.sync-conflict-\(stamp)-ABCDEFG.json"), ("Info.json", "Info.sync-conflict-\(stamp)-ABCDEFG.json")] {
            try FileManager.default.copyItem(
                at: other.library.appendingPathComponent("trip.note/\(member)"), to: package.appendingPathComponent(copy))
        }
    }

    private func conflictIDs(_ title: String) throws -> [String] {
        try #require(try versions(title)["conflicts"] as? [[String: Any]]).compactMap { $0["id"] as? String }
    }

    @Test("each edit keeps the version it replaced, and versions lists them newest first")
    func versionsListsPreviousVersions() throws {
        try notes.ok(["new", "Trip", "--body", "one\n"])
        try notes.ok(["edit", "Trip", "--append", "two"])
        try notes.ok(["edit", "Trip", "--append", "three"])
        let listing = try versions("Trip")
        #expect(listing["title"] as? String == "Trip")
        let current = try #require(listing["current"] as? [String: Any])
        #expect(current["origin"] as? String == "current" && current["conflict"] as? Bool == false)
        #expect(current["date"] is String && current["host"] is NSNull && current["user"] is NSNull)
        let others = try others("Trip")
        try #require(others.count == 2)
        #expect(others.allSatisfy { $0["origin"] as? String == "save" && $0["conflict"] as? Bool == false && $0["resolved"] as? Bool == true })
        #expect(others.allSatisfy { $0["host"] is String && $0["date"] is String && $0["discardable"] is Bool && $0.keys.contains("user") })
        #expect((listing["conflicts"] as? [Any])?.isEmpty == true)
        let ids = others.compactMap { $0["id"] as? String }
        #expect(try notes.ok(["show", "Trip", "--version", ids[0]]) == "one\ntwo\n")
        #expect(try notes.ok(["show", "Trip", "--version", ids[1]]) == "one\n")
        let text = try notes.ok(["versions", "Trip"])
        #expect(text.contains("current") && text.contains(ids[0]) && text.contains(ids[1]) && text.contains("save"))
        // The store is hidden from the notes themselves.
        #expect(try #require(try notes.json(["list", "--json"]) as? [[String: Any]]).count == 1)
    }

    @Test("show --version --json gives the old body and the version; an unknown id exits 66 naming note and id")
    func showVersion() throws {
        try notes.ok(["new", "Trip", "--body", "old body\n"])
        try notes.ok(["edit", "Trip", "--set", "new body\n"])
        let id = try #require(try others("Trip").first?["id"] as? String)
        let details = try #require(try notes.json(["show", "Trip", "--version", id, "--json"]) as? [String: Any])
        #expect(details["body"] as? String == "old body\n" && details["title"] as? String == "Trip")
        #expect((details["version"] as? [String: Any])?["id"] as? String == id)
        #expect(try notes.ok(["show", "Trip"]) == "new body\n")
        let unknown = try notes.run(["show", "Trip", "--version", "20200101T000000Z-0000000000000000"])
        #expect(unknown.status == 66)
        #expect(unknown.stderr.contains("Trip") && unknown.stderr.contains("20200101T000000Z-0000000000000000"))
        #expect(try notes.run(["restore", "Trip", "nonsense"]).status == 66)
    }

    @Test("restore brings an old version back and keeps the one it replaced")
    func restoreKeepsReplaced() throws {
        try notes.ok(["new", "Trip", "--body", "first\n"])
        try notes.ok(["edit", "Trip", "--set", "second\n"])
        let first = try #require(try others("Trip").first?["id"] as? String)
        let output = try notes.ok(["restore", "Trip", first])
        #expect(output.contains("Restored") && output.contains(first))
        #expect(try notes.ok(["show", "Trip"]) == "first\n")
        let others = try others("Trip")
        #expect(others.count == 2)
        let bodies = try others.compactMap { $0["id"] as? String }.map { try notes.ok(["show", "Trip", "--version", $0]) }
        #expect(Set(bodies) == ["first\n", "second\n"])
    }

    @Test("list --json counts conflicts: 0 without any")
    func listCountsNoConflicts() throws {
        try notes.ok(["new", "Trip", "--body", "x"])
        let list = try #require(try notes.json(["list", "--json"]) as? [[String: Any]])
        #expect(list.first?["conflicts"] as? Int == 0)
        #expect(try #require(try notes.json(["conflicts", "--json"]) as? [Any]).isEmpty)
        #expect(try notes.ok(["conflicts"]).contains("No unresolved conflicts"))
    }

    @Test("a sync engine's conflict copies in a note become a conflict version that conflicts, list and versions show")
    func conflictCopiesAreAdopted() throws {
        try makeConflict(base: "one\ntwo\nthree\n", ours: "ONE\ntwo\nthree\n", theirs: "one\ntwo\nTHREE\n")
        let conflicts = try #require(try notes.json(["conflicts", "--json"]) as? [[String: Any]])
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["title"] as? String == "Trip" && conflicts.first?["package"] as? String == "trip.note")
        let versions = try #require(conflicts.first?["conflicts"] as? [[String: Any]])
        #expect(versions.count == 1 && versions.first?["conflict"] as? Bool == true && versions.first?["resolved"] as? Bool == false)
        #expect(versions.first?["origin"] as? String == "adoptedCopy")
        // The copies left the note; the current note is untouched.
        let members = try FileManager.default.contentsOfDirectory(atPath: notes.library.appendingPathComponent("trip.note").path)
        #expect(!members.contains { $0.contains("sync-conflict") })
        #expect(try notes.ok(["show", "Trip"]) == "ONE\ntwo\nthree\n")
        let id = try #require(versions.first?["id"] as? String)
        #expect(try notes.ok(["show", "Trip", "--version", id]) == "one\ntwo\nTHREE\n")
        #expect(try #require(try notes.json(["list", "--json"]) as? [[String: Any]]).first?["conflicts"] as? Int == 1)
        #expect(try notes.ok(["list"]).contains("Trip  (1 conflict)"))
        #expect(try conflictIDs("Trip") == [id])
        #expect(try others("Trip").allSatisfy { $0["id"] as? String != id })  // others excludes unresolved conflicts
    }

    @Test("resolve --keep current marks the conflict resolved and leaves the note as it is")
    func resolveKeepCurrent() throws {
        try makeConflict(base: "one\n", ours: "ours\n", theirs: "theirs\n")
        let id = try #require(try conflictIDs("Trip").first)
        #expect(try notes.ok(["resolve", "Trip", "--keep", "current"]).contains("1 conflict version resolved"))
        #expect(try notes.ok(["show", "Trip"]) == "ours\n")
        #expect(try conflictIDs("Trip").isEmpty)
        let kept = try #require(try others("Trip").first { $0["id"] as? String == id })
        #expect(kept["conflict"] as? Bool == true && kept["resolved"] as? Bool == true)
        #expect(try #require(try notes.json(["conflicts", "--json"]) as? [Any]).isEmpty)
    }

    @Test("resolve --keep ID makes the note that conflict version and keeps the current one")
    func resolveKeepConflict() throws {
        try makeConflict(base: "one\n", ours: "ours\n", theirs: "theirs\n")
        let id = try #require(try conflictIDs("Trip").first)
        try notes.ok(["resolve", "Trip", "--keep", id])
        #expect(try notes.ok(["show", "Trip"]) == "theirs\n")
        #expect(try conflictIDs("Trip").isEmpty)
        let bodies = try others("Trip").compactMap { $0["id"] as? String }.map { try notes.ok(["show", "Trip", "--version", $0]) }
        #expect(bodies.contains("ours\n"))
        #expect(try notes.run(["resolve", "Trip", "--keep", id]).status == 64)  // not an unresolved conflict any more
    }

    @Test("resolve --merge merges each conflict into the note, marks clashes, and clears the conflicts")
    func resolveMerge() throws {
        try makeConflict(base: "one\ntwo\nthree\n", ours: "ONE\ntwo\nthree\n", theirs: "one\ntwo\nTHREE\n")
        let output = try notes.ok(["resolve", "Trip", "--merge"])
        #expect(output.contains("Merged 1 conflict version"))
        let merged = try notes.ok(["show", "Trip"])
        // Both changes land; without a known common ancestor the merge is two-way and marks them.
        #expect(merged.contains("ONE") && merged.contains("THREE") && merged.contains("two"))
        #expect(try conflictIDs("Trip").isEmpty)
        #expect(try others("Trip").contains { $0["origin"] as? String == "save" })
        #expect(try notes.ok(["resolve", "Trip", "--merge"]).contains("no unresolved conflicts"))
    }

    @Test("resolve --merge with two conflicts marks the clash of each and keeps every side")
    func resolveMergeTwoConflicts() throws {
        try makeConflict(base: "base\n", ours: "ours\n", theirs: "theirs A\n", stamp: "20261122-101500")
        let second = NotesRunner(library: directory.appending("Second"))
        try second.ok(["init"])
        try FileManager.default.copyItem(
            at: directory.appending("Other-20261122-101500").appendingPathComponent("trip.note"),
            to: second.library.appendingPathComponent("trip.note"))
        try second.ok(["edit", "Trip", "--set", "theirs B\n"])
        try notes.ok(["list"])  // adopts the first conflict
        try plantCopies(from: second, stamp: "20261122-111500")
        #expect(try conflictIDs("Trip").count == 2)
        let output = try notes.ok(["resolve", "Trip", "--merge"])
        #expect(output.contains("Merged 2 conflict versions") && output.contains("2 clashes marked"))
        let merged = try notes.ok(["show", "Trip"])
        #expect(merged.contains("ours") && merged.contains("theirs A") && merged.contains("theirs B") && merged.contains("<<<<<<< current"))
        #expect(try conflictIDs("Trip").isEmpty)
    }

    @Test("resolve needs --keep or --merge, not both")
    func resolveUsage() throws {
        try notes.ok(["new", "Trip", "--body", "x"])
        #expect(try notes.run(["resolve", "Trip"]).status == 64)
        #expect(try notes.run(["resolve", "Trip", "--keep", "current", "--merge"]).status == 64)
        #expect(try notes.ok(["resolve", "Trip", "--keep", "current"]).contains("no unresolved conflicts"))
    }

    @Test("a damaged record in the store is a warning naming it; versions and show still work")
    func damagedStore() throws {
        try notes.ok(["new", "Trip", "--body", "one\n"])
        try notes.ok(["edit", "Trip", "--set", "two\n"])
        try notes.ok(["edit", "Trip", "--set", "three\n"])
        let store = notes.library.appendingPathComponent(".documentkit-versions")
        let records = FileManager.default.enumerator(atPath: store.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix("/record.json") } ?? []
        let damaged = try #require(records.sorted().first)
        try Data("{ garbage".utf8).write(to: store.appendingPathComponent(damaged))
        let result = try notes.run(["versions", "Trip", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning") && result.stderr.contains(damaged))
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((listing["others"] as? [Any])?.count == 1)
        #expect(try notes.ok(["show", "Trip"]) == "three\n")
        #expect(try notes.run(["list"]).stderr.isEmpty)
    }

    @Test("check says what the store holds of each note: versions, unresolved conflicts, copies not adopted yet, damage")
    func checkReportsTheStore() throws {
        try makeConflict(base: "one\n", ours: "one\nours\n", theirs: "one\ntheirs\n")
        func store() throws -> [String: Any] {
            let checks = try #require(try notes.json(["check", "Trip", "--json"]) as? [[String: Any]])
            return try #require(checks.first?["store"] as? [String: Any])
        }
        // check adopts nothing: the copies are pending.
        let before = try store()
        #expect((before["pendingConflictCopies"] as? [String])?.sorted() == [
            "Info.sync-conflict-20261122-101500-ABCDEFG.json", "body.sync-conflict-20261122-101500-ABCDEFG.json",
        ])
        #expect(before["unresolvedConflicts"] as? Int == 0)
        try notes.ok(["conflicts"])  // adopts
        let after = try store()
        #expect((after["pendingConflictCopies"] as? [String])?.isEmpty == true)
        #expect(after["unresolvedConflicts"] as? Int == 1)
        #expect(after["versions"] as? Int == 2)  // the edit's replaced version and the conflict
        // A damaged record is reported by check, naming it, and check still succeeds.
        let documents = notes.library.appendingPathComponent(".documentkit-versions/documents")
        let document = try #require(try FileManager.default.contentsOfDirectory(atPath: documents.path).first)
        let entry = try #require(try FileManager.default.contentsOfDirectory(atPath: documents.appendingPathComponent(document).path).first)
        let record = documents.appendingPathComponent("\(document)/\(entry)/record.json")
        try Data("{".utf8).write(to: record)
        let damaged = try store()
        #expect((damaged["problems"] as? [String])?.contains { $0.contains(record.path) } == true)
        let text = try notes.ok(["check", "Trip"])
        #expect(text.contains("version store: ") && text.contains(record.path))
    }
}
