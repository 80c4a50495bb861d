import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@Suite("A coordination that waited follows an item a coordinated mover moved")
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
