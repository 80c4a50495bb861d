import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@Suite("A coordination that waited follows an item that moved meanwhile")
struct MovedWhileWaitingTests {
    @Test("the accessor gets the item's new URL after another process moved it while we waited")
    func accessorGetsNewURL() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("old.txt", "contents")
        let mover = try fixture.hold("move", fixture.url("old.txt").path, milliseconds: 30_000, action: "move=\(fixture.url("new.txt").path)")
        try #require(await mover.wait(for: "granted", timeout: .seconds(20)) != nil, "\(mover.errorOutput)")
        let reader = Task {
            try await fixture.coordinator.coordinate(with: [.readingIntent(with: fixture.url("old.txt"))], timeout: .seconds(20)) { intents in
                (intents[0].url, try String(contentsOf: intents[0].url, encoding: .utf8))
            }
        }
        try await Task.sleep(for: .milliseconds(200))  // the reader is waiting now
        mover.release()
        let (url, text) = try await reader.value
        #expect(url.standardizedFileURL == fixture.url("new.txt").standardizedFileURL)
        #expect(text == "contents")
    }

    /// A child holds a write of `held`; while this process waits to read `read`, `move` runs
    /// (a program that does not coordinate moving something); then the child lets go.
    func readWhileMoved(_ fixture: Fixture, held: String, read: String, move: () throws -> Void) async throws
        -> (url: URL, text: String, deleted: Bool)
    {
        let holder = try fixture.hold("write", fixture.url(held).path, milliseconds: 30_000)
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")
        let reader = Task {
            try await fixture.coordinator.coordinate(with: [.readingIntent(with: fixture.url(read))], timeout: .seconds(20)) { intents in
                let url = intents[0].url
                return (url, (try? String(contentsOf: url, encoding: .utf8)) ?? "", intents[0].itemWasDeletedWhileWaiting)
            }
        }
        try await Task.sleep(for: .milliseconds(200))  // the reader is waiting now
        try move()
        holder.release()
        let (url, text, deleted) = try await reader.value
        return (url, text, deleted)
    }

    /// `/bin/mv from to`, in the item folder.
    func mv(_ fixture: Fixture, _ from: String, _ to: String) throws {
        let mv = try Process.run(URL(fileURLWithPath: "/bin/mv"), arguments: [fixture.url(from).path, fixture.url(to).path])
        mv.waitUntilExit()
        #expect(mv.terminationStatus == 0)
    }

    @Test("a file renamed by plain mv while we waited: the accessor gets its new URL")
    func followsUnannouncedRename() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("notes/old.txt", "contents")
        let seen = try await readWhileMoved(fixture, held: "notes/old.txt", read: "notes/old.txt") {
            try mv(fixture, "notes/old.txt", "notes/new.txt")
        }
        #expect(seen.url.standardizedFileURL == fixture.url("notes/new.txt").standardizedFileURL)
        #expect(seen.text == "contents")
        #expect(!seen.deleted)
    }

    @Test("a package renamed by plain mv while we waited for a member: the member's URL is inside the new name")
    func followsUnannouncedPackageRename() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Trip.pkg/body.md", "body")
        let seen = try await readWhileMoved(fixture, held: "Trip.pkg", read: "Trip.pkg/body.md") { try mv(fixture, "Trip.pkg", "Voyage.pkg") }
        #expect(seen.url.standardizedFileURL == fixture.url("Voyage.pkg/body.md").standardizedFileURL)
        #expect(seen.text == "body")
        #expect(!seen.deleted)
    }

    @Test("a file moved to another folder by plain mv while we waited reads as deleted (it can't be found)")
    func unannouncedMoveElsewhereIsDeletion() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a/doc.txt", "contents")
        try fixture.makeFolder("b")
        let (url, _, deleted) = try await readWhileMoved(fixture, held: "a/doc.txt", read: "a/doc.txt") {
            try mv(fixture, "a/doc.txt", "b/doc.txt")
        }
        #expect(url.standardizedFileURL == fixture.url("a/doc.txt").standardizedFileURL)
        #expect(deleted)
    }

    @Test("item(at:didMoveTo:) tells this process's presenters, once, and fails outside a coordination")
    func presentersFollowAnnouncedMove() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a.txt")
        final class MoveRecorder: FilePresenter {
            let presentedItemURL: URL?
            let moves = Mutex<[URL]>([])
            init(_ url: URL) { presentedItemURL = url }
            func presentedItemDidMove(to newURL: URL) async { moves.withLock { $0.append(newURL) } }
        }
        let presenter = MoveRecorder(fixture.url("a.txt"))
        let registration = fixture.namespace.addPresenter(presenter)
        defer { registration.remove() }
        try fixture.coordinator.coordinate(
            writingItemAt: fixture.url("a.txt"), options: .forMoving, writingItemAt: fixture.url("b.txt"), options: .forReplacing
        ) { from, to in
            try FileManager.default.moveItem(at: from, to: to)
            try fixture.coordinator.item(at: from, didMoveTo: to)
        }
        try await Task.sleep(for: .milliseconds(300))  // the watcher sees the rename too: not again
        #expect(presenter.moves.withLock { $0 }.map(\.lastPathComponent) == ["b.txt"])
        #expect(throws: DocumentKitError.self) { try fixture.coordinator.item(at: fixture.url("b.txt"), didMoveTo: fixture.url("c.txt")) }
    }
}
