import DocumentKitTesting
import Foundation
import Testing

/// A note edited by another program (§3 of issue #13): told apart from one a sync is still
/// delivering, accepted by `notes repair`, and copies made with `cp -a` that become notes of
/// their own.
@Suite(.timeLimit(.minutes(2))) struct NotesRepairTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner
    /// Edits settle at once.
    let settled = ["NOTES_SETTLE_SECONDS": "0"]

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-repair")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "Pack the tent."])
    }

    private var package: URL { notes.library.appendingPathComponent("trip.note") }
    private var body: URL { package.appendingPathComponent("body.json") }
    private var manifest: URL { package.appendingPathComponent("Info.json") }

    /// Appends a byte to the body, as `echo >> trip.note/body.json` does.
    private func appendToBody() throws {
        let handle = try FileHandle(forWritingTo: body)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))
        try handle.close()
    }

    /// The body's JSON with its text replaced, as an editor writing it would.
    private func editedBody(_ text: String) throws -> Data {
        let json = String(decoding: try Data(contentsOf: body), as: UTF8.self)
        #expect(json.contains("\"Pack the tent.\""))
        return Data(json.replacingOccurrences(of: "\"Pack the tent.\"", with: "\"\(text)\"").utf8)
    }

    private func versionCount(_ title: String) throws -> Int {
        let json = try #require(try notes.json(["versions", title, "--json"]) as? [String: Any])
        return (json["others"] as? [Any])?.count ?? -1
    }

    @Test("a member edited in place and settled: show says so and names repair, repair accepts it and keeps the note as found as a version")
    func settledEditIsRepaired() throws {
        try notes.ok(["edit", "Trip", "--append", "Buy gas."])  // keeps the first state as a version
        try appendToBody()
        let manifestBefore = try Data(contentsOf: manifest)
        let show = try notes.run(["show", "Trip"], environment: settled)
        #expect(show.status == 65, "\(show.stderr)")
        #expect(show.stderr.contains("body.json") && show.stderr.contains("notes repair"), "\(show.stderr)")
        #expect(!show.stderr.contains("still be delivering"), "\(show.stderr)")
        // The store's newest whole version is named (lastCompleteVersionPath).
        #expect(show.stderr.contains("last complete version") && show.stderr.contains(".documentkit-versions"), "\(show.stderr)")
        #expect(try Data(contentsOf: manifest) == manifestBefore, "show wrote the manifest")
        let check = try notes.run(["check", "--json"], environment: settled)
        let checks = try #require(try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [[String: Any]])
        #expect(checks.first?["problem"] as? String == "modifiedPackage")
        #expect((checks.first?["message"] as? String)?.contains("notes repair trip.note") == true)

        let repair = try notes.run(["repair", "Trip"], environment: settled)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("Repaired") && repair.stdout.contains("body.json"), "\(repair.stdout)")
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\nBuy gas.\n")
        // Two versions now: the first state, and the note as found (its old manifest).
        let versions = try #require(try notes.json(["versions", "Trip", "--json"]) as? [String: Any])
        let others = try #require(versions["others"] as? [[String: Any]])
        #expect(others.count == 2)
        let found = try #require(others.first { ($0["id"] as? String).map { repair.stdout.contains($0) } == true })
        #expect(found["origin"] as? String == "save")
        let again = try notes.run(["repair", "Trip"], environment: settled)
        #expect(again.status == 0 && again.stdout.contains("nothing to repair"), "\(again.stdout)\(again.stderr)")
    }

    @Test("an editor's save of one member by rename is settled after the period and repaired, by title")
    func editorSaveIsRepaired() throws {
        let edited = try editedBody("Pack the tent and the stove.")
        let temporary = package.appendingPathComponent(".body.json.swp")
        try edited.write(to: temporary)
        #expect(rename(temporary.path, body.path) == 0)
        #expect(try notes.run(["list"], environment: settled).stderr.contains("trip.note"))
        let repair = try notes.run(["repair", "Trip"], environment: settled)
        #expect(repair.status == 0, "\(repair.stderr)")
        let shown = try notes.ok(["show", "Trip"])
        #expect(shown == "Pack the tent and the stove.\n")
    }

    @Test("a member still changing (a sync may be delivering): show and repair exit 75 and write nothing; the note reads once the manifest arrives")
    func deliveringIsRefusedUntilComplete() throws {
        // The newer state, made elsewhere: a second library with a copy of the note, edited.
        let other = NotesRunner(library: directory.appending("Other"))
        try FileManager.default.createDirectory(at: other.library, withIntermediateDirectories: true)
        let remote = other.library.appendingPathComponent("trip.note")
        #expect(Process.status("/bin/cp", ["-a", package.path, remote.path]) == 0)
        try other.ok(["edit", "Trip", "--append", "Buy gas."])
        // The sync delivers the body first (a temporary file renamed into place)...
        let temporary = package.appendingPathComponent(".syncthing.body.json.tmp")
        try Data(contentsOf: remote.appendingPathComponent("body.json")).write(to: temporary)
        #expect(rename(temporary.path, body.path) == 0)
        let before = try Data(contentsOf: manifest)
        let show = try notes.run(["show", "Trip"])
        #expect(show.status == 75, "\(show.stderr)")
        #expect(show.stderr.contains("still be delivering"), "\(show.stderr)")
        let repair = try notes.run(["repair", "Trip"])
        #expect(repair.status == 75, "\(repair.stderr)")
        #expect(try Data(contentsOf: manifest) == before, "repair wrote while the note was changing")
        // ... then the manifest: the note is whole and reads without a repair.
        let manifestTemporary = package.appendingPathComponent(".syncthing.Info.json.tmp")
        try Data(contentsOf: remote.appendingPathComponent("Info.json")).write(to: manifestTemporary)
        #expect(rename(manifestTemporary.path, manifest.path) == 0)
        #expect(try notes.ok(["show", "Trip"]) == "Pack the tent.\nBuy gas.\n")
    }

    @Test("a missing body is not accepted by repair: exit 65, the package untouched")
    func unreadableMembersAreNotAccepted() throws {
        try FileManager.default.removeItem(at: body)
        let before = try Data(contentsOf: manifest)
        let repair = try notes.run(["repair", "Trip"], environment: settled)
        #expect(repair.status == 65, "\(repair.stderr)")
        #expect(repair.stderr.contains("restore a version"), "\(repair.stderr)")
        #expect(try Data(contentsOf: manifest) == before)
    }

    @Test("a cp -a copy becomes a note of its own at its first save: its own identifier, the original's history untouched")
    func copyGetsItsOwnIdentity() throws {
        try notes.ok(["edit", "Trip", "--append", "Buy gas."])
        let originalVersions = try versionCount("trip.note")
        #expect(originalVersions == 1)
        let copy = notes.library.appendingPathComponent("trip-copy.note")
        #expect(Process.status("/bin/cp", ["-a", package.path, copy.path]) == 0)
        try notes.ok(["edit", "trip-copy.note", "--append", "Copy only."])
        try notes.ok(["edit", "trip-copy.note", "--append", "Copy again."])
        // The copy has the original's title: name each by its package.
        #expect(try versionCount("trip.note") == originalVersions, "the copy's saves went into the original's history")
        #expect(try versionCount("trip-copy.note") == 2)
        let list = try #require(try notes.json(["list", "--json"]) as? [[String: Any]])
        let identifiers = Set(list.compactMap { $0["documentIdentifier"] as? String })
        #expect(list.count == 2 && identifiers.count == 2)
        #expect(try notes.run(["check"]).status == 0)
        #expect(try notes.ok(["show", "trip.note"]) == "Pack the tent.\nBuy gas.\n")
    }
}

extension NotesRepairTests {
    @Test("a cp -a copy of a note with no versions yet becomes a note of its own at its first save; the original keeps its identifier")
    func copyWithoutHistoryGetsItsOwnIdentity() throws {
        let before = try #require(try notes.json(["show", "trip.note", "--json"]) as? [String: Any])
        let identifier = try #require(before["documentIdentifier"] as? String)
        let copy = notes.library.appendingPathComponent("trip-copy.note")
        #expect(Process.status("/bin/cp", ["-a", package.path, copy.path]) == 0)
        #expect(try notes.run(["check"]).status == 65)  // two packages, one identifier: ambiguous until a save
        try notes.ok(["edit", "trip-copy.note", "--append", "Copy only."])
        let copied = try #require(try notes.json(["show", "trip-copy.note", "--json"]) as? [String: Any])
        #expect(copied["documentIdentifier"] as? String != identifier)
        try notes.ok(["edit", "trip.note", "--append", "Original only."])
        let original = try #require(try notes.json(["show", "trip.note", "--json"]) as? [String: Any])
        #expect(original["documentIdentifier"] as? String == identifier)
        #expect(try versionCount("trip.note") == 1 && versionCount("trip-copy.note") == 1)
        #expect(try notes.run(["check"]).status == 0)
    }
}

extension Process {
    /// Runs `executable` with `arguments` and returns its exit status.
    static func status(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
