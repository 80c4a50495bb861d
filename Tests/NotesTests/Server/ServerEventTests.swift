import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// `notes serve`: `GET /api/events`, the library's changes as server-sent events, whoever made
/// them: the server, the CLI, a shell or a sync engine.
@Suite("notes serve: the event stream")
struct ServerEventTests {
    /// A served library with one note, `Trip`, and a client of its event stream, primed.
    struct Feed {
        let served: ServedLibrary
        let reader: EventStreamReader
        let id: String
        var server: NotesServerProcess { served.server }

        static func start(environment: [String: String] = [:]) async throws -> Feed {
            let served = try await ServedLibrary.start(environment: environment) { try $0.ok(["new", "Trip", "--body", "tent\n"]) }
            let id = try #require(try await served.server.get("/api/notes").objects.first?["id"] as? String)
            let reader = try EventStreamReader(server: served.server)
            let primed = try await reader.wait { !$0.isEmpty }
            #expect(primed.first?.id != nil, "the stream starts with an id")
            return Feed(served: served, reader: reader, id: id)
        }

        /// Makes a change through the CLI (`notes new Sentinel-N`) and waits for its event: every
        /// event of what happened before it came before it.
        func settle(_ label: String) async throws -> [ServerSentEvent] {
            try served.notes.ok(["new", "Sentinel \(label)"])
            let events = try await reader.wait { $0.contains { $0.json["title"] == "Sentinel \(label)" } }
            #expect(
                events.contains { $0.json["title"] == "Sentinel \(label)" && $0.event == "created" },
                "the sentinel came: \(events); the server said: \(server.stderr.withLock { $0 })")
            return events.filter { $0.json["title"] != "Sentinel \(label)" }
        }

        /// The events about note `id` (not the priming frame).
        func events(about id: String, in events: [ServerSentEvent]) -> [ServerSentEvent] {
            events.filter { $0.json["id"] == id }
        }
    }

    @Test func theFirstFramePrimesTheClientsLastEventID() async throws {
        let served = try await ServedLibrary.start()
        let reader = try EventStreamReader(server: served.server)
        let events = try await reader.wait { !$0.isEmpty }
        #expect(reader.status == 200)
        let first = try #require(events.first)
        #expect(first.data.isEmpty && first.event == "message")
        let id = try #require(first.id)
        #expect(id.range(of: #"^[0-9a-f]{8}:[0-9]+$"#, options: .regularExpression) != nil, "EPOCH:SEQ: \(id)")
    }

    @Test func aWriteOfTheServerGivesExactlyOneChangedEventWithItsETag() async throws {
        let feed = try await Feed.start()
        let etag = try #require(try await feed.server.note(feed.id).etag)
        let put = try await feed.server.put(feed.id, ifMatch: etag, ["body": "stove\n"])
        #expect(put.status == 200)
        let about = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(about.map(\.event) == ["changed"], "\(about)")
        #expect(about.first?.json["etag"] == put.etag && about.first?.json["url"] == "/api/notes/\(feed.id)")
        #expect(about.first?.json["title"] == "Trip")
    }

    @Test func anEditThroughTheCLIGivesOneChangedEvent() async throws {
        let feed = try await Feed.start()
        try feed.served.notes.ok(["edit", "Trip", "--append", "stove"])
        let about = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(about.map(\.event) == ["changed"], "\(about)")
        let current = try await feed.server.note(feed.id).etag
        #expect(about.first?.json["etag"] == current)
    }

    @Test func notesNewGivesCreatedAndNotesRmGivesDeleted() async throws {
        let feed = try await Feed.start()
        try feed.served.notes.ok(["new", "Groceries", "--body", "milk\n"])
        let created = try await feed.reader.wait { $0.contains { $0.json["title"] == "Groceries" } }
        let event = try #require(created.first { $0.json["title"] == "Groceries" })
        #expect(event.event == "created")
        let id = try #require(event.json["id"])
        let current = try await feed.server.note(id).etag
        #expect(event.json["etag"] == current)
        try feed.served.notes.ok(["rm", "Groceries"])
        let about = feed.events(about: id, in: try await feed.settle("1"))
        #expect(about.map(\.event) == ["created", "deleted"], "\(about)")
        #expect(about.last?.json["etag"] == nil)
    }

    @Test func aPackageRenamedOrRemovedInTheShellIsFollowed() async throws {
        let feed = try await Feed.start()
        let etag = try #require(try await feed.server.note(feed.id).etag)
        let library = feed.served.library
        try FileManager.default.moveItem(at: library.appendingPathComponent("trip.note"), to: library.appendingPathComponent("voyage.note"))
        let moved = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(moved.last?.event != "deleted", "the note is still there: \(moved)")
        let note = try await feed.server.note(feed.id)
        #expect(note.etag == etag && note.object["body"] as? String == "tent\n")
        try FileManager.default.removeItem(at: library.appendingPathComponent("voyage.note"))
        let removed = feed.events(about: feed.id, in: try await feed.settle("2"))
        #expect(removed.last?.event == "deleted", "\(removed)")
        expectAPIError(try await feed.server.get("/api/notes/\(feed.id)"), 404)
    }

    @Test func aCopyOfAPackageSharesTheIdWithoutHidingTheOriginal() async throws {
        let feed = try await Feed.start()
        let etag = try #require(try await feed.server.note(feed.id).etag)
        let library = feed.served.library
        let copy = library.appendingPathComponent("trip copy.note")
        try runTool("cp", ["-r", library.appendingPathComponent("trip.note").path, copy.path])
        let copied = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(!copied.contains { $0.event == "deleted" }, "\(copied)")
        #expect(try await feed.server.note(feed.id).etag == etag)
        let listed = try await feed.server.get("/api/notes").objects.filter { $0["id"] as? String == feed.id }
        #expect(listed.count == 1 && listed.first?["etag"] as? String == etag, "the note is listed once: \(listed)")
        // The listing names what GET gives, even when the copy is the one that changed.
        let copyBody = copy.appendingPathComponent("body.json")
        let edited = NotesRunner(library: feed.served.directory.appending("Other"))
        try edited.ok(["init"])
        try FileManager.default.copyItem(at: copy, to: edited.library.appendingPathComponent("trip.note"))
        try edited.ok(["edit", "Trip", "--set", "the copy\n"])
        for member in ["body.json", "Info.json"] {
            let from = edited.library.appendingPathComponent("trip.note/\(member)").path
            #expect(rename(from, copy.appendingPathComponent(member).path) == 0, "\(member): errno \(errno)")
        }
        #expect(FileManager.default.fileExists(atPath: copyBody.path))
        let again = try await feed.server.get("/api/notes").objects.filter { $0["id"] as? String == feed.id }
        let got = try await feed.server.note(feed.id)
        #expect(again.count == 1 && again.first?["etag"] as? String == got.etag, "\(again) vs \(got.etag ?? "")")
        let afterEdit = feed.events(about: feed.id, in: try await feed.settle("edit"))
        #expect(afterEdit.last.map { $0.json["etag"] == got.etag } ?? true, "the feed's last word is what GET gives: \(afterEdit)")
        // The copy goes: the note is still there, and no client is told it was deleted.
        try FileManager.default.removeItem(at: copy)
        let removed = feed.events(about: feed.id, in: try await feed.settle("2"))
        #expect(!removed.contains { $0.event == "deleted" }, "the original is still there: \(removed)")
        let note = try await feed.server.note(feed.id)
        #expect(note.etag == etag)
        let put = try await feed.server.put(feed.id, ifMatch: etag, ["body": "after the copy\n"])
        #expect(put.status == 200, "\(put.text)")
        #expect(try feed.served.notes.ok(["show", "Trip"]) == "after the copy\n")
    }

    @Test func aSyncEnginesConflictCopyOfAPackageBecomesAConflictVersionAndTheNoteStays() async throws {
        let feed = try await Feed.start()
        let etag = try #require(try await feed.server.note(feed.id).etag)
        let library = feed.served.library
        // The note edited on another machine, delivered beside it under the sync engine's conflict name.
        let other = NotesRunner(library: feed.served.directory.appending("Other"))
        try other.ok(["init"])
        try FileManager.default.copyItem(at: library.appendingPathComponent("trip.note"), to: other.library.appendingPathComponent("trip.note"))
        try other.ok(["edit", "Trip", "--set", "the other machine's\n"])
        try FileManager.default.moveItem(
            at: other.library.appendingPathComponent("trip.note"),
            to: library.appendingPathComponent("trip.sync-conflict-20261127-120000-ABCDEFG.note"))
        let deadline = ContinuousClock.now + .seconds(20)
        var conflicts: [[String: Any]] = []
        while conflicts.isEmpty && ContinuousClock.now < deadline {
            // A listing adopts the copies of whole notes beside their originals, as `notes list` does.
            #expect(try await feed.server.get("/api/notes").status == 200)
            conflicts = try await feed.server.get("/api/notes/\(feed.id)/conflicts").objects
            if conflicts.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(conflicts.count == 1, "the copy became a conflict version")
        let version = try await feed.server.get(try #require(conflicts.first?["url"] as? String))
        #expect(version.object["body"] as? String == "the other machine's\n")
        let about = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(!about.contains { $0.event == "deleted" }, "the note never went: \(about)")
        let note = try await feed.server.note(feed.id)
        #expect(note.etag == etag && note.header("Conflicts") == "1" && note.object["body"] as? String == "tent\n")
        let listed = try await feed.server.get("/api/notes").objects.filter { $0["title"] as? String == "Trip" }
        #expect(listed.compactMap { $0["id"] as? String } == [feed.id], "the copy is no note of its own: \(listed)")
        // The note's bytes never changed, but its conflicts did: one event says so, with the same tag.
        let counted = about.filter { $0.conflicts == 1 }
        #expect(counted.count == 1 && counted.first?.event == "changed" && counted.first?.json["etag"] == etag, "\(about)")

        // Resolved by keeping the note as it is: again no byte of the note changes, and one event says 0.
        let resolved = try await feed.server.request(
            "POST", "/api/notes/\(feed.id)/conflicts/resolve", headers: ["If-Match": etag], json: ["keep": "current"])
        #expect(resolved.status == 200 && resolved.etag == etag, "\(resolved.text)")
        let afterResolving = feed.events(about: feed.id, in: try await feed.settle("2")).dropFirst(about.count)
        #expect(afterResolving.map(\.event) == ["changed"], "\(afterResolving)")
        #expect(afterResolving.first?.conflicts == 0 && afterResolving.first?.json["etag"] == etag)
    }

    @Test func aSyncEngineReplacingMembersByRenameGivesOneChangedEventWithTheNewETag() async throws {
        let feed = try await Feed.start()
        let library = feed.served.library
        // The note as another machine saved it, delivered as a sync engine delivers: each
        // member written to a temporary file in the package, then renamed over the old one.
        let other = NotesRunner(library: feed.served.directory.appending("Other"))
        try other.ok(["init"])
        try FileManager.default.copyItem(at: library.appendingPathComponent("trip.note"), to: other.library.appendingPathComponent("trip.note"))
        try other.ok(["edit", "Trip", "--set", "from the other machine\n"])
        let package = library.appendingPathComponent("trip.note")
        for member in ["body.json", "Info.json"] {
            let temporary = package.appendingPathComponent(".syncthing.\(member).tmp")
            try Data(contentsOf: other.library.appendingPathComponent("trip.note/\(member)")).write(to: temporary)
            #expect(rename(temporary.path, package.appendingPathComponent(member).path) == 0)
        }
        let about = feed.events(about: feed.id, in: try await feed.settle("1"))
        let note = try await feed.server.note(feed.id)
        #expect(note.object["body"] as? String == "from the other machine\n")
        #expect(about.last?.event == "changed" && about.last?.json["etag"] == note.etag, "\(about)")
        #expect(!about.contains { $0.event == "deleted" }, "\(about)")
    }

    @Test func reconnectingWithLastEventIDReplaysExactlyTheEventsAfterIt() async throws {
        let feed = try await Feed.start()
        let server = feed.server
        var etag = try #require(try await server.note(feed.id).etag)
        for round in 0..<3 {
            _ = try await server.create("Note \(round)")
            etag = try #require(try await server.put(feed.id, ifMatch: etag, ["body": "round \(round)\n"]).etag)
        }
        let all = Array(try await feed.reader.wait { $0.count >= 7 }.dropFirst())
        #expect(all.count == 6, "six events: \(all)")
        let ids = all.compactMap(\.id)
        #expect(ids.count == 6 && Set(ids).count == 6)
        let cut = try #require(all[1].id)
        let resumed = try EventStreamReader(server: server, lastEventID: cut)
        let replayed = try await resumed.wait { $0.count >= 4 }
        #expect(replayed == Array(all[2...]), "exactly the events after \(cut), in order")
        // A live event after the replay comes once, to both.
        let put = try await server.put(feed.id, ifMatch: etag, ["body": "live\n"])
        let live = try await resumed.wait { $0.count >= 5 }
        _ = try await feed.reader.wait { $0.count >= 8 }
        #expect(live.count == 5 && live.last?.json["etag"] == put.etag && live.last == feed.reader.received.last)
        // Up to date: the stream is primed with the id the client had.
        let current = try EventStreamReader(server: server, lastEventID: live.last?.id)
        let primed = try await current.wait { !$0.isEmpty }
        #expect(primed.count == 1 && primed.first?.id == live.last?.id && primed.first?.data == "")
        _ = try await feed.settle("1")
        #expect(try await resumed.wait { $0.count >= 6 }.count == 6, "no duplicate after the sentinel")
    }

    @Test(arguments: ["deadbeef:3", "garbage", "00000000:99999"])
    func aLastEventIDOfAnotherEpochGivesAReset(_ cursor: String) async throws {
        let feed = try await Feed.start()
        let reader = try EventStreamReader(server: feed.server, lastEventID: cursor)
        let events = try await reader.wait { !$0.isEmpty }
        #expect(events.first?.event == "reset", "\(events)")
        #expect(events.first?.id?.hasPrefix(String(feed.reader.received[0].id?.prefix(8) ?? "")) == true)
        // After a reset, the id it gave resumes normally.
        let again = try EventStreamReader(server: feed.server, lastEventID: events.first?.id)
        #expect(try await again.wait { !$0.isEmpty }.first?.event == "message")
    }

    @Test func aCursorAheadOfTheFeedGivesAReset() async throws {
        let feed = try await Feed.start()
        let epoch = try #require(feed.reader.received.first?.id?.split(separator: ":").first)
        let reader = try EventStreamReader(server: feed.server, lastEventID: "\(epoch):1000")
        #expect(try await reader.wait { !$0.isEmpty }.first?.event == "reset")
    }

    @Test func aHeartbeatCommentComesWhileNothingHappens() async throws {
        let served = try await ServedLibrary.start(environment: ["NOTES_SSE_HEARTBEAT_MS": "200"])
        let reader = try EventStreamReader(server: served.server)
        let deadline = ContinuousClock.now + .seconds(20)
        while !reader.receivedComments.contains(" hb") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(reader.receivedComments.contains(" hb"), "\(reader.receivedComments)")
        #expect(!reader.hasEnded)
    }

    /// Runs the server in a user namespace of its own that may have no inotify instance, as on a
    /// machine whose `fs.inotify.max_user_instances` is used up; nil where `unshare -U` can't.
    static let withoutInotify: [String]? = {
        let launcher = ["/usr/bin/unshare", "-U", "-r", "/bin/sh", "-c", #"echo 0 > /proc/sys/user/max_inotify_instances && exec "$0" "$@""#]
        guard FileManager.default.isExecutableFile(atPath: launcher[0]) else { return nil }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: launcher[0])
        probe.arguments = Array(launcher.dropFirst()) + ["/bin/true"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return nil }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? launcher : nil
    }()

    @Test(.enabled(if: withoutInotify != nil, "needs user namespaces (unshare -U)"))
    func withoutInotifyTheFeedSaysSoAndStillDeliversEventsAndHeartbeats() async throws {
        let served = try await ServedLibrary.start(environment: ["NOTES_SSE_HEARTBEAT_MS": "200"], launcher: Self.withoutInotify ?? []) {
            try $0.ok(["new", "Trip", "--body", "tent\n"])
        }
        let id = try #require(try await served.server.get("/api/notes").objects.first?["id"] as? String)
        let reader = try EventStreamReader(server: served.server)
        _ = try await reader.wait { !$0.isEmpty }
        try served.notes.ok(["edit", "Trip", "--append", "stove"])
        let events = try await reader.wait { $0.contains { $0.json["id"] == id } }
        let note = try await served.server.note(id)
        #expect(events.filter { $0.json["id"] == id }.map(\.event) == ["changed"], "\(events)")
        #expect(events.last?.json["etag"] == note.etag)
        let deadline = ContinuousClock.now + .seconds(20)
        while !reader.receivedComments.contains(" hb") && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(reader.receivedComments.contains(" hb"), "heartbeats go on: \(reader.receivedComments)")
        #expect(served.server.stderr.withLock { $0 }.contains("can't be watched"), "the server says why it polls")
        #expect(try await served.server.terminate(timeout: .seconds(10)) == 0)
    }

    @Test func aClientThatGoesAwayLeavesTheServerAndTheOtherClientsServing() async throws {
        let feed = try await Feed.start(environment: ["NOTES_SSE_HEARTBEAT_MS": "100"])
        for _ in 0..<5 {
            let leaving = try EventStreamReader(server: feed.server)
            _ = try await leaving.wait { !$0.isEmpty }
            leaving.close()
        }
        // A client that connects and goes away before it reads anything.
        let fd = try LoopbackHTTP.connect(port: feed.server.port)
        try LoopbackHTTP.sendAll(fd, LoopbackHTTP.head("GET", "/api/events", headers: [], bodyLength: nil))
        close(fd)
        let etag = try #require(try await feed.server.note(feed.id).etag)
        let put = try await feed.server.put(feed.id, ifMatch: etag, ["body": "still here\n"])
        #expect(put.status == 200)
        let about = feed.events(about: feed.id, in: try await feed.settle("1"))
        #expect(about.map(\.event) == ["changed"])
        #expect(try await feed.server.terminate(timeout: .seconds(10)) == 0)
    }

    @Test func sigtermWithThreeOpenStreamsEndsThemAndExitsZero() async throws {
        let feed = try await Feed.start()
        let others = try (0..<2).map { _ in try EventStreamReader(server: feed.server) }
        for reader in others { _ = try await reader.wait { !$0.isEmpty } }
        // Well within the server's own 20 s graceful-shutdown budget: a stream that held it up would show.
        #expect(try await feed.server.terminate(timeout: .seconds(10)) == 0)
        for reader in others + [feed.reader] {
            let deadline = ContinuousClock.now + .seconds(5)
            while !reader.hasEnded && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(reader.hasEnded)
        }
    }
}
