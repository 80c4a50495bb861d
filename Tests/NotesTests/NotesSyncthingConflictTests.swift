import DocumentKitTesting
import Foundation
import Testing

/// Issue #5 against a real sync engine: two Syncthing instances on loopback, each with its own
/// copy of one notes library (the library is the synced folder). One note is edited on both sides
/// while they are disconnected, Syncthing leaves a conflict copy of each changed member inside the
/// package, and `notes` on both sides adopts the copies into the version store
/// (`.documentkit-versions/`), deterministically, so that the two sides converge.
///
/// Needs `syncthing` (`Scripts/bootstrap.sh test`); the pair is run by the tests' own harness,
/// `SyncthingPair`. Without syncthing the tests fail and say what to install.
/// `DOCUMENTKIT_SKIP_SYNCTHING=1` skips them.
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: !SyncthingPair.isOptedOut,
        "DOCUMENTKIT_SKIP_SYNCTHING=1 switches off the tests against a real Syncthing pair"))
struct NotesSyncthingConflictTests {
    typealias Side = SyncthingPair.Side

    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-syncthing")
    }

    static let title = "Trip"
    static let original = "Pack light."
    /// The two conflicting bodies; each has a line the other lacks.
    static let edits: [Side: String] = [
        .a: "Pack light.\nFrom a: take the train.",
        .b: "Pack light.\nFrom b: take the plane.",
    ]

    @Test("a conflict made by Syncthing is adopted on both sides; resolve --keep ID keeps the conflict version everywhere")
    func keepConflictVersion() throws {
        try withPair("keepConflictVersion") { session in
            let conflict = try makeAdoptedConflict(session, editing: [.a, .b])
            try session.step("resolve --keep on a, wait-sync") {
                try session.ok(.a, ["resolve", Self.title, "--keep", conflict.id])
                try session.pair.waitSync()
            }
            try session.step("check both sides") {
                for side in Side.allCases {
                    try checkResolved(session, side, conflict)
                    let body = try session.body(side, Self.title)
                    session.expect(
                        body == conflict.conflictBody,
                        "side \(side): after resolve --keep \(conflict.id), the body is \(body.debugDescription), "
                            + "not the kept conflict version's \(conflict.conflictBody.debugDescription)")
                }
            }
        }
    }

    @Test("a conflict made by Syncthing is adopted on both sides; resolve --merge keeps both edits' lines everywhere")
    func mergeConflict() throws {
        try withPair("mergeConflict") { session in
            // b edits first this time: a's later edit usually wins (the newer modification time).
            let conflict = try makeAdoptedConflict(session, editing: [.b, .a])
            try session.step("resolve --merge on a, wait-sync") {
                try session.ok(.a, ["resolve", Self.title, "--merge"])
                try session.pair.waitSync()
            }
            try session.step("check both sides") {
                var bodies: [Side: String] = [:]
                for side in Side.allCases {
                    try checkResolved(session, side, conflict)
                    let body = try session.body(side, Self.title)
                    bodies[side] = body
                    let lines = Set(body.split(separator: "\n").map(String.init))
                    let wanted = Set(Self.edits.values.flatMap { $0.split(separator: "\n").map(String.init) })
                    session.expect(
                        wanted.isSubset(of: lines),
                        "side \(side): the merged body lacks \(wanted.subtracting(lines).sorted()); it is \(body.debugDescription)")
                }
                session.expect(
                    bodies[.a] == bodies[.b],
                    "the merged body differs: a \(bodies[.a]?.debugDescription ?? "-"), b \(bodies[.b]?.debugDescription ?? "-")")
            }
        }
    }

    // MARK: The scenario

    /// The conflict, adopted on both sides and synced.
    struct Conflict {
        let package: String
        let id: String
        let currentBody: String
        let conflictBody: String
    }

    /// Starts the pair, creates the note on a, syncs, edits it on both sides while disconnected,
    /// checks Syncthing's conflict copies, then adopts them on both sides (`notes conflicts`),
    /// syncs, and checks that both sides show one current version and one unresolved conflict
    /// version, which together hold the two edits. `editing`: the order of the two edits.
    func makeAdoptedConflict(_ session: PairSession, editing order: [Side]) throws -> Conflict {
        let pair = session.pair
        let title = Self.title
        var package = ""
        try session.step("create the note on a, wait-sync") {
            try session.ok(.a, ["init"])
            let path = try session.ok(.a, ["new", title, "--body", Self.original])
            package = URL(fileURLWithPath: path.trimmingCharacters(in: .whitespacesAndNewlines)).lastPathComponent
            try pair.waitSync()
        }
        let members = try session.names(in: package, on: .a)
        try session.require(members.contains("Info.json") && members.count >= 2, "\(package) on a holds \(members.sorted())")
        let onB = try session.body(.b, title)
        let membersOnB = try session.names(in: package, on: .b)
        try session.require(
            onB == Self.original && membersOnB == members,
            "after wait-sync, b does not have the note as a wrote it: body \(onB.debugDescription), \(package) holds \(membersOnB.sorted())")

        try session.step("pause, edit on both sides, scan, resume, wait-sync") {
            try pair.pause(.a)
            for side in order { try session.ok(side, ["edit", title, "--set", Self.edits[side]!]) }
            try pair.scan()
            try pair.resume(.a)
            try pair.waitSync()
            // Each side must adopt the copies it has before it hears of the other's adoption: the
            // first notes command on a moves a's copies into its store, and Syncthing would then
            // delete b's copies too (they are synced files), sometimes before b's first command.
            try pair.pause(.a)
        }
        try session.step("check Syncthing's conflict copies") {
            try checkSyncthingCopies(session, package: package, members: members)
        }

        // Adoption: each side adopts the copies it has, before it has seen the other's adoption.
        try session.step("notes conflicts --json on a and on b") {
            for side in Side.allCases {
                let list = try session.jsonArray(side, ["conflicts", "--json"])
                try session.require(
                    list.count == 1 && list[0]["title"] as? String == title && list[0]["package"] as? String == package
                        && (list[0]["conflicts"] as? [Any])?.count == 1,
                    "side \(side): notes conflicts --json (adopting) gave \(list), not one entry for \(package) with one conflict")
            }
        }
        try session.step("resume, wait-sync after adoption") {
            try pair.resume(.a)
            try pair.waitSync()
        }

        return try session.step("check the adopted conflict on both sides") {
            var found: [Side: Conflict] = [:]
            for side in Side.allCases {
                session.expectNoCopiesOutsideStore(side)
                session.expect(
                    FileManager.default.fileExists(atPath: pair.dir(side).appendingPathComponent(".documentkit-versions").path),
                    "side \(side): no .documentkit-versions/ at the library's root after adoption and sync")
                let versions = try session.jsonObject(side, ["versions", title, "--json"])
                let conflicts = versions["conflicts"] as? [[String: Any]] ?? []
                try session.require(
                    versions["current"] is [String: Any] && conflicts.count == 1,
                    "side \(side): notes versions --json should have one current version and one unresolved conflict: \(versions)")
                let version = conflicts[0]
                let id = try session.unwrap(version["id"] as? String, "side \(side): a conflict version without an id: \(version)")
                session.expect(
                    version["conflict"] as? Bool == true && version["resolved"] as? Bool == false,
                    "side \(side): the conflict version is not an unresolved conflict: \(version)")
                let current = try session.body(side, title)
                let other = try session.body(side, title, version: id)
                try session.require(
                    Set([current, other]) == Set(Self.edits.values) && current != other,
                    "side \(side): current body \(current.debugDescription) and conflict version \(id)'s body "
                        + "\(other.debugDescription) are not the two edits")
                let list = try session.jsonArray(side, ["conflicts", "--json"])
                let ids = list.flatMap { ($0["conflicts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }
                session.expect(ids == [id], "side \(side): notes conflicts --json lists \(ids), versions --json \(id)")
                session.expectListConflicts(side, 1)
                found[side] = Conflict(package: package, id: id, currentBody: current, conflictBody: other)
            }
            let (a, b) = (found[.a]!, found[.b]!)
            try session.require(
                a.id == b.id && a.currentBody == b.currentBody,
                "the sides did not converge: a has current \(a.currentBody.debugDescription) and conflict \(a.id), "
                    + "b has current \(b.currentBody.debugDescription) and conflict \(b.id)")
            return a
        }
    }

    /// Syncthing left, in the package on both sides, exactly one conflict copy of each member
    /// (`body.sync-conflict-….EXT` and `Info.sync-conflict-….json`), with the same names on both
    /// sides, and none elsewhere; the body's copy holds the losing edit.
    func checkSyncthingCopies(_ session: PairSession, package: String, members: Set<String>) throws {
        let pair = session.pair
        var copiesBySide: [Side: Set<String>] = [:]
        for side in Side.allCases {
            let names = try session.names(in: package, on: side)
            let copies = names.filter { PairSession.syncthingCopy($0) != nil }
            let originals = copies.compactMap { PairSession.syncthingCopy($0)?.original }
            try session.require(
                originals.count == members.count && Set(originals) == members && names.subtracting(copies) == members,
                "side \(side): Syncthing did not leave exactly one conflict copy of each member (\(members.sorted())) "
                    + "inside \(package); it holds \(names.sorted())")
            // Inside the store, Syncthing may copy a record that both sides wrote for the same
            // version (same contents, other times): the store removes those itself (checked at the end).
            let elsewhere = SyncthingPair.tree(pair.dir(side)).filter {
                $0.contains(".sync-conflict-") && !$0.hasPrefix(package + "/") && !$0.hasPrefix(".documentkit-versions/")
            }
            session.expect(elsewhere.isEmpty, "side \(side): conflict copies outside \(package): \(elsewhere)")
            copiesBySide[side] = copies
        }
        session.expect(
            copiesBySide[.a] == copiesBySide[.b],
            "the conflict copies differ: a \(copiesBySide[.a]!.sorted()), b \(copiesBySide[.b]!.sorted())")

        // The copies' contents are read first: any `notes` command adopts them (moves them into the store).
        let bodyCopy = try session.unwrap(
            copiesBySide[.a]!.first { PairSession.syncthingCopy($0)?.original != "Info.json" }, "no conflict copy of the body")
        var copyTexts: [Side: String] = [:]
        for side in Side.allCases {
            copyTexts[side] = try String(
                contentsOf: pair.dir(side).appendingPathComponent(package).appendingPathComponent(bodyCopy), encoding: .utf8)
        }
        // Which edit won: the current body, the same on both sides; the body's copy holds the other.
        let current = try session.body(.a, Self.title)
        let winner = try session.unwrap(
            Self.edits.first { $0.value == current }?.key, "the body after the conflict is neither edit: \(current.debugDescription)")
        let loser: Side = winner == .a ? .b : .a
        let currentOnB = try session.body(.b, Self.title)
        session.expect(currentOnB == current, "a and b show different bodies after the conflict: \(currentOnB.debugDescription)")
        let losingLine = String(Self.edits[loser]!.split(separator: "\n").last!)
        for side in Side.allCases {
            session.expect(
                copyTexts[side]!.contains(losingLine), "side \(side): \(bodyCopy) does not hold the losing edit (\(losingLine))")
        }
        let device = copiesBySide[.a]!.compactMap { PairSession.syncthingCopy($0)?.device }
        session.note(
            "Syncthing: \(winner)'s edit won; copies \(copiesBySide[.a]!.sorted()) on both sides "
                + "(device ids in the names: \(Set(device).sorted()); a=\(pair.shortDeviceID(.a)), b=\(pair.shortDeviceID(.b)))")
    }

    /// After a resolution, on `side`: no unresolved conflict anywhere, no conflict copy outside
    /// the store, a current version.
    func checkResolved(_ session: PairSession, _ side: Side, _ conflict: Conflict) throws {
        let list = try session.jsonArray(side, ["conflicts", "--json"])
        session.expect(list.isEmpty, "side \(side): notes conflicts --json after resolving: \(list)")
        let versions = try session.jsonObject(side, ["versions", Self.title, "--json"])
        let unresolved = versions["conflicts"] as? [Any]
        session.expect(
            versions["current"] is [String: Any] && unresolved?.isEmpty == true,
            "side \(side): notes versions --json after resolving should have a current version and no unresolved conflict: \(versions)")
        session.expectListConflicts(side, 0)
        session.expectNoCopiesOutsideStore(side)
        // The store cleaned up the copies Syncthing made of its records (listing the versions does).
        let inStore = SyncthingPair.tree(session.pair.dir(side)).filter { $0.contains(".sync-conflict-") }
        session.expect(inStore.isEmpty, "side \(side): conflict copies left in the store: \(inStore)")
    }

    /// Starts a pair in this test's temporary folder, runs `body`, and stops the pair whatever
    /// happens; prints diagnostics if anything failed, and the step timings.
    func withPair(_ name: String, _ body: (PairSession) throws -> Void) throws {
        let started = ContinuousClock.now
        let pair = try SyncthingPair.start(in: directory.url)
        let session = PairSession(pair: pair)
        session.timings.append(("up", ContinuousClock.now - started))
        defer {
            if session.failed { print("=== \(name): diagnostics\n\(session.diagnostics())") }
            pair.stop()
            print("\(name): \(session.timingSummary(total: ContinuousClock.now - started))")
            for line in session.notes { print("\(name): \(line)") }
        }
        do {
            try body(session)
        } catch is PairSession.Stop {
            // recorded already
        } catch {
            session.failed = true
            throw error
        }
    }
}

/// One run against a pair: runs `notes` on either side, keeps a transcript and step timings, and
/// records failures with what is needed to understand them.
final class PairSession {
    typealias Side = SyncthingPair.Side

    /// Thrown by `require` after the failure has been recorded: ends the test.
    struct Stop: Error {}

    let pair: SyncthingPair
    var failed = false
    var timings: [(String, Duration)] = []
    private(set) var transcript: [String] = []
    private(set) var notes: [String] = []

    init(pair: SyncthingPair) { self.pair = pair }

    /// A runner of `notes` on `side`'s library.
    func runner(_ side: Side) -> NotesRunner { NotesRunner(library: pair.dir(side)) }

    /// Runs `notes ARGUMENTS --library SIDE`, recorded in the transcript.
    @discardableResult
    func run(_ side: Side, _ arguments: [String]) throws -> NotesRunner.Result {
        let result = try runner(side).run(arguments)
        let err = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        transcript.append(
            "[\(side)] notes \(arguments.joined(separator: " ")) → exit \(result.status)"
                + (err.isEmpty ? "" : "\n      stderr: \(err.replacingOccurrences(of: "\n", with: "\n      "))"))
        return result
    }

    /// Runs and requires exit status 0; returns standard output.
    @discardableResult
    func ok(_ side: Side, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(side, arguments)
        try require(
            result.status == 0,
            "side \(side): notes \(arguments.joined(separator: " ")) failed (exit \(result.status)):\n\(result.stderr)",
            sourceLocation: sourceLocation)
        return result.stdout
    }

    /// `notes show TITLE [--version ID]`, without the final newline `show` adds.
    func body(_ side: Side, _ title: String, version: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> String
    {
        let output = try ok(side, ["show", title] + (version.map { ["--version", $0] } ?? []), sourceLocation: sourceLocation)
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    /// Standard output decoded as a JSON array of objects.
    func jsonArray(_ side: Side, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [[String: Any]]
    {
        let output = try ok(side, arguments, sourceLocation: sourceLocation)
        let value = try? JSONSerialization.jsonObject(with: Data(output.utf8))
        return try unwrap(
            value as? [[String: Any]], "side \(side): notes \(arguments.joined(separator: " ")) did not print a JSON array: \(output)",
            sourceLocation: sourceLocation)
    }

    /// Standard output decoded as a JSON object.
    func jsonObject(_ side: Side, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [String: Any]
    {
        let output = try ok(side, arguments, sourceLocation: sourceLocation)
        let value = try? JSONSerialization.jsonObject(with: Data(output.utf8))
        return try unwrap(
            value as? [String: Any], "side \(side): notes \(arguments.joined(separator: " ")) did not print a JSON object: \(output)",
            sourceLocation: sourceLocation)
    }

    /// The names in `package` on `side`.
    func names(in package: String, on side: Side) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: pair.dir(side).appendingPathComponent(package).path))
    }

    /// No Syncthing conflict copy anywhere in `side`'s library but in the version store.
    func expectNoCopiesOutsideStore(_ side: Side, sourceLocation: SourceLocation = #_sourceLocation) {
        let left = SyncthingPair.tree(pair.dir(side)).filter {
            $0.contains(".sync-conflict-") && !$0.hasPrefix(".documentkit-versions/")
        }
        expect(
            left.isEmpty, "side \(side): conflict copies left outside .documentkit-versions/: \(left)", sourceLocation: sourceLocation)
    }

    /// `notes list --json` has one note, with `conflicts` = `count`.
    func expectListConflicts(_ side: Side, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let list = try? jsonArray(side, ["list", "--json"], sourceLocation: sourceLocation) else { return }
        expect(
            list.count == 1 && list[0]["conflicts"] as? Int == count,
            "side \(side): notes list --json should have one note with \"conflicts\": \(count): \(list)", sourceLocation: sourceLocation)
    }

    /// If `name` is a Syncthing conflict copy (`NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT`):
    /// the original's name and the 7-character device id.
    static func syncthingCopy(_ name: String) -> (original: String, device: String)? {
        guard let marker = name.range(of: ".sync-conflict-") else { return nil }
        let stem = name[..<marker.lowerBound]
        let rest = name[marker.upperBound...]
        let parts = rest.split(separator: "-", maxSplits: 2)
        guard parts.count == 3, parts[0].count == 8, parts[1].count == 6,
            parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber), parts[1].allSatisfy(\.isNumber)
        else { return nil }
        let device = parts[2].prefix(7)
        let ext = parts[2].dropFirst(7)
        guard device.count == 7, ext.isEmpty || ext.hasPrefix(".") else { return nil }
        return (String(stem) + ext, String(device))
    }

    // MARK: Expectations

    /// Records an issue with `message` unless `condition` holds.
    func expect(_ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard !condition else { return }
        failed = true
        Issue.record(Comment(rawValue: message()), sourceLocation: sourceLocation)
    }

    /// Records an issue with `message` and ends the test unless `condition` holds.
    func require(_ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        guard !condition else { return }
        expect(false, message(), sourceLocation: sourceLocation)
        throw Stop()
    }

    /// `value`, or records an issue with `message` and ends the test.
    func unwrap<T>(_ value: T?, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        guard let value else {
            try require(false, message(), sourceLocation: sourceLocation)
            throw Stop()
        }
        return value
    }

    // MARK: Diagnostics

    /// Runs `body`, timed.
    func step<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        let started = ContinuousClock.now
        defer { timings.append((name, ContinuousClock.now - started)) }
        return try body()
    }

    /// A line printed at the end of the test.
    func note(_ line: String) { notes.append(line) }

    func timingSummary(total: Duration) -> String {
        func seconds(_ duration: Duration) -> String {
            String(format: "%.1f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        return "total \(seconds(total)): " + timings.map { "\($0.0) \(seconds($0.1))" }.joined(separator: ", ")
    }

    /// Both sides' trees, the `notes` transcript, the harness's runs and state, Syncthing's logs.
    func diagnostics() -> String {
        """
        \(pair.trees())
        --- notes transcript:
        \(transcript.joined(separator: "\n"))
        --- harness steps:
        \(pair.journal.joined(separator: "\n"))
        --- pair status:
        \(pair.status())
        \(pair.logTails())
        """
    }
}
