// Issue #5: optimistic concurrency of versioned saves across processes. Two `dk-coordination-child
// race` processes open the same note from the same state, then save it at the same moment (both
// wait on their standard input, and the test writes to both at once), round after round. No
// saved state may be lost: afterwards each one is the current version, or a version in the store
// (an unresolved conflict version when the save that replaced it was not based on it).

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import RaceTestSupport
import DocumentKitTesting
import Foundation
import Testing

@Suite("Versioned saves racing across processes")
struct ConcurrentVersionedSaveTests {
    static let rounds = 40
    static let packageName = "Race.pkg"

    /// The library, the note in it (body "base", saved through the store) and the store.
    struct Library {
        let fixture: Fixture
        let url: URL
        let store: VersionStore
        /// Whether the note is stored as one zip file (`RaceZipNoteDocument`).
        let zip: Bool

        init(zip: Bool = false) async throws {
            self.zip = zip
            fixture = try Fixture()
            url = fixture.url(zip ? "Race.zdoc" : ConcurrentVersionedSaveTests.packageName)
            // As the racers: no flushes (a killed process is what is simulated, not a power cut).
            store = VersionStore(libraryURL: fixture.items.url, coordinator: fixture.coordinator, durability: .consistent)
            let options = SaveOptions(durability: .consistent)
            let note =
                zip
                ? RaceZipNoteDocument(fileURL: url, content: "base", saveOptions: options, coordinator: fixture.coordinator)
                : RaceNoteDocument(fileURL: url, content: "base", saveOptions: options, coordinator: fixture.coordinator)
            note.versionStore = store
            try await note.save()
            try await note.close()
        }

        /// A racer saving `rounds` times, its bodies `TAG-1`, `TAG-2`...
        func racer(_ tag: String, rounds: Int) throws -> Child {
            try Child(
                [
                    "race", fixture.namespaceFolder.url.path, fixture.extensionsArgument, fixture.items.url.path,
                    url.lastPathComponent, String(rounds), tag,
                ] + (zip ? ["zip"] : []), outputFolder: fixture.namespaceFolder.url)
        }

        /// The body of the note as it is now.
        var currentBody: String { get throws { try body(of: url) } }

        /// The body of the package at `url` (the note, or a version's contents in the store).
        func body(of url: URL) throws -> String {
            guard zip else { return String(decoding: try Data(contentsOf: url.appendingPathComponent("body.txt")), as: UTF8.self) }
            let tree = try SingleFileArchive.expand(try FileWrapper(contentsOf: url), at: url)
            return String(decoding: try tree["body.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
        }
    }

    /// What a racer printed about one round: `opened r BODY <ns>` and `saved r BODY CONFLICT <ns>`.
    struct Report {
        var openedBody: String
        var savedBody: String
        /// The id of the conflict version the save kept, if it found another racer's state on disk.
        var conflict: String?
        var releasedAt: UInt64
        var savedAt: UInt64
    }

    @Test(
        "Two processes save the same note from the same base at the same moment, many times: no saved state is lost",
        arguments: [false, true])
    func twoRacers(storedAsOneZipFile zip: Bool) async throws {
        let started = ContinuousClock.now
        let library = try await Library(zip: zip)
        let racers = try [("A", library.racer("A", rounds: Self.rounds)), ("B", library.racer("B", rounds: Self.rounds))]
        var winners = ["base"]  // the current body after each round: round 0 is the note as created
        var losers = [""]  // the body the winner's save kept as a conflict version, by round
        var conflictIDs = [""]  // the id of that conflict version, by round
        var secondSaveLag: [UInt64] = []  // how long after the first save the second one ended
        var firstSaveTime: [UInt64] = []  // from the barrier to the end of the first save
        for round in 1...Self.rounds {
            var reports: [String: Report] = [:]
            for (_, child) in racers { child.release() }  // open
            for (tag, child) in racers {
                let words = try #require(await child.line("opened \(round)", timeout: .seconds(30)), "\(tag) round \(round): \(child.errorOutput)")
                // The barrier: neither can have opened after the other saved (both wait below).
                #expect(words[2] == winners[round - 1], "\(tag) opened round \(round) on \(words[2]), not \(winners[round - 1])")
                reports[tag] = Report(openedBody: String(words[2]), savedBody: "", conflict: nil, releasedAt: 0, savedAt: 0)
            }
            let released = monotonicNanoseconds()
            for (_, child) in racers { child.release() }  // the barrier: both save now
            for (tag, child) in racers {
                let words = try #require(await child.line("saved \(round)", timeout: .seconds(30)), "\(tag) round \(round): \(child.errorOutput)")
                #expect(words[2] == "\(tag)-\(round)")
                reports[tag]!.savedBody = String(words[2])
                reports[tag]!.conflict = words[3] == "-" ? nil : String(words[3])
                reports[tag]!.releasedAt = released
                reports[tag]!.savedAt = UInt64(words[4]) ?? 0
            }
            // Coordination serialises the saves. The first finds the round's base on disk and
            // keeps no conflict; the second finds the first's state, which it was not based on,
            // and keeps it as an unresolved conflict version before saving over it.
            let second = reports.values.filter { $0.conflict != nil }
            try #require(second.count == 1, "round \(round): conflicts found \(reports.mapValues { $0.conflict ?? "-" })")
            let first = reports.values.first { $0.conflict == nil }!
            winners.append(second[0].savedBody)
            losers.append(first.savedBody)
            conflictIDs.append(second[0].conflict!)
            secondSaveLag.append(second[0].savedAt &- first.savedAt)
            firstSaveTime.append(first.savedAt &- first.releasedAt)
            #expect(try library.currentBody == second[0].savedBody, "round \(round)")
        }
        for (tag, child) in racers {
            #expect(await child.exitStatus(timeout: .seconds(30)) == 0, "\(tag): \(child.errorOutput)")
        }

        // Every one of the 80 saved states is kept, and only the losers are conflicts:
        // - the winner of the last round is the current version;
        // - the loser of round r (the first to save) is an unresolved conflict version, the one
        //   the winner's save reported, whose ancestor is the round's base (the winner of round
        //   r - 1, or "base"): its save kept it as an ordinary version when it replaced it;
        // - the winner of round r < 40 is an ordinary version with origin `save`, not a conflict:
        //   both saves of round r + 1 were based on it; the first replaced it and kept it;
        // - "base" is an ordinary `save` version too; nothing else is in the store, and each
        //   state is there once (the loser's own save of it, when the winner replaced it, is the
        //   same contents and the same id as the conflict version, so no second entry).
        let listing = try library.store.versions(ofItemAt: library.url)
        #expect(listing.problems.isEmpty, "\(listing.problems)")
        #expect(try library.currentBody == winners[Self.rounds])
        var byBody: [String: [FileVersion]] = [:]
        for version in listing.others { byBody[try library.body(of: version.url), default: []].append(version) }
        let expectedBodies = Set(winners.dropLast() + losers.dropFirst())
        #expect(expectedBodies.count == 2 * Self.rounds)
        #expect(Set(byBody.keys) == expectedBodies, "missing \(expectedBodies.subtracting(byBody.keys).sorted()), unexpected \(Set(byBody.keys).subtracting(expectedBodies).sorted())")
        for (body, versions) in byBody where versions.count != 1 {
            Issue.record("\(body) is kept \(versions.count) times: \(versions.map { "\($0.persistentIdentifier) \($0.origin.map(\.rawValue) ?? "?")" })")
        }
        func version(_ body: String) -> FileVersion? { byBody[body]?.first }
        for round in 1...Self.rounds {
            let loser = try #require(version(losers[round]), "round \(round): the loser \(losers[round]) is lost")
            #expect(loser.isUnresolvedConflict && loser.origin == .conflict, "round \(round): \(losers[round]) is not an unresolved conflict")
            #expect(loser.persistentIdentifier == conflictIDs[round], "round \(round)")
            let base = version(winners[round - 1])
            #expect(base != nil && loser.ancestorIdentifier == base?.persistentIdentifier,
                "round \(round): ancestor \(loser.ancestorIdentifier ?? "nil"), base \(winners[round - 1]) is \(base?.persistentIdentifier ?? "missing")")
        }
        for body in winners.dropLast() {
            let kept = try #require(version(body), "\(body), a round's winner, is lost")
            #expect(!kept.isConflict && kept.origin == .save, "\(body): \(kept.origin.map(\.rawValue) ?? "?"), conflict \(kept.isConflict)")
        }
        #expect(listing.unresolvedConflicts.count == Self.rounds)

        let wins = winners.dropFirst().filter { $0.hasPrefix("A-") }.count
        let lags = secondSaveLag.sorted()
        let firsts = firstSaveTime.sorted()
        print(
            "racing saves: \(Self.rounds) rounds, \(conflictIDs.count - 1) with a conflict; A won \(wins), B \(Self.rounds - wins);"
                + " first save ended \(firsts[firsts.count / 2] / 1000) µs after the barrier (median),"
                + " the second \(lags[lags.count / 2] / 1000) µs after the first (median), \(lags.last! / 1000) µs (max);"
                + " \(ContinuousClock.now - started)")
    }
}

extension ConcurrentVersionedSaveTests {
    static let killSeed = SeededRandom.seed(environment: "DK_RACE_KILL_SEED", default: 0x5A7E)
    static let killIterations = 24

    /// Hidden names (`.new-…`, staging folders) in `folder`.
    static func hiddenNames(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(".") }.sorted()
    }

    @Test("A racer killed at a random moment of its save leaves a store without problems, a whole note, and the survivor's state kept")
    func killedRacer() async throws {
        let started = ContinuousClock.now
        print("killed racer: seed \(Self.killSeed)")
        var random = SeededRandom(seed: Self.killSeed)
        let library = try await Library()
        var previous = "base"  // the current body when the iteration starts
        var outcomes: [String: Int] = [:]
        var strandedReplaced: [String] = []  // previous states kept only in a hidden entry
        for iteration in 1...Self.killIterations {
            let survivor = try library.racer("A\(iteration)", rounds: 1)
            let victim = try library.racer("B\(iteration)", rounds: 1)
            let (saved, killed) = ("A\(iteration)-1", "B\(iteration)-1")
            for child in [survivor, victim] { child.release() }  // open
            for child in [survivor, victim] {
                let words = try #require(await child.line("opened 1", timeout: .seconds(30)), "iteration \(iteration): \(child.errorOutput)")
                #expect(words[2] == previous, "iteration \(iteration)")
            }
            let delay = Int.random(in: 0..<80_000, using: &random)  // µs: spans both saves
            for child in [survivor, victim] { child.release() }  // the barrier
            usleep(useconds_t(delay))
            let victimReported = victim.output.contains("saved 1 ")
            victim.killNow()
            let words = try #require(await survivor.line("saved 1", timeout: .seconds(30)), "iteration \(iteration): \(survivor.errorOutput)")
            #expect(await survivor.exitStatus(timeout: .seconds(30)) == 0, "iteration \(iteration): \(survivor.errorOutput)")
            let survivorConflict = words[3] == "-" ? nil : String(words[3])

            // The note opens whole (the manifest's records of every member check out).
            let note = try await RaceNoteDocument.open(at: library.url, coordinator: library.fixture.coordinator)
            let current = note.content
            try await note.close()
            let listing = try library.store.versions(ofItemAt: library.url)
            #expect(listing.problems.isEmpty, "iteration \(iteration): \(listing.problems)")
            var byBody: [String: [FileVersion]] = [:]
            for version in listing.others { byBody[try library.body(of: version.url), default: []].append(version) }

            // The survivor's save happened: its state is current, or the victim's save came
            // after it, based on the iteration's base, and kept it as a conflict first.
            #expect(current == saved || current == killed, "iteration \(iteration): current \(current)")
            if current != saved {
                #expect(byBody[saved]?.contains { $0.isUnresolvedConflict } == true, "iteration \(iteration): \(saved) is lost")
            }
            // If the survivor found the victim's state on disk, that is a conflict version now.
            if let survivorConflict {
                let conflict = listing.others.first { $0.persistentIdentifier == survivorConflict }
                #expect(conflict?.isUnresolvedConflict == true, "iteration \(iteration)")
                #expect(try conflict.map { try library.body(of: $0.url) } == killed, "iteration \(iteration)")
            }
            // The iteration's base was replaced by a save based on it: an ordinary version.
            if byBody[previous] == nil { strandedReplaced.append(previous) }
            let victimSaved = current == killed || byBody[killed] != nil
            let outcome = victimReported ? "victim reported its save" : victimSaved ? "victim's save landed, unreported" : "victim's save did not land"
            outcomes[outcome, default: 0] += 1
            previous = current
        }
        let storeFolder = library.store.url.appendingPathComponent("documents")
        let documentFolders = (try? FileManager.default.contentsOfDirectory(atPath: storeFolder.path)) ?? []
        let storeLeftovers = documentFolders.flatMap { Self.hiddenNames(in: storeFolder.appendingPathComponent($0)) }
        let libraryLeftovers = Self.hiddenNames(in: library.fixture.items.url).filter { $0 != VersionStore.folderName }
        // A save makes the kept version whole in the store before it swaps (store format 2): the
        // replaced state reaches the store or the save fails, whenever the saver is killed.
        #expect(strandedReplaced.isEmpty, "replaced states lost: \(strandedReplaced)")
        print(
            "killed racer: \(Self.killIterations) iterations, \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "));"
                + " replaced states kept only in a hidden entry: \(strandedReplaced);"
                + " hidden leftovers: store \(storeLeftovers.count), library \(libraryLeftovers); \(ContinuousClock.now - started)")
    }
}

extension Child {
    /// The words of the first line of output that starts with `prefix` and a space, waiting for
    /// it until the child exits or `timeout` passes (nil).
    func line(_ prefix: String, timeout: Duration) async -> [Substring]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let exited = hasExited
            for line in output.split(separator: "\n") where line.hasPrefix(prefix + " ") {
                return line.split(separator: " ")
            }
            if exited || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
