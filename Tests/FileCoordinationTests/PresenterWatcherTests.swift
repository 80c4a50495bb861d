import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Collects a presenter's events; `next` waits for the next one, `quiet` checks none follow.
final class EventCollector: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[PresentedItemEvent]>([])
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<PresentedItemEvent>) {
        let storage = self.storage
        task = Task { for await event in stream { storage.events.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    /// Waits (up to `timeout`) until `count` events arrived; returns them all.
    func wait(for count: Int, timeout: Duration = .seconds(10)) async -> [PresentedItemEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = storage.events.withLock { $0 }
            if now.count >= count { return now }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return storage.events.withLock { $0 }
    }

    /// All events after a quiet period (so that late duplicates would be seen).
    func settled(after quiet: Duration = .milliseconds(300)) async -> [PresentedItemEvent] {
        try? await Task.sleep(for: quiet)
        return storage.events.withLock { $0 }
    }

    /// Runs each shell command in turn (an uncoordinated writer), waiting after each until
    /// `total` events arrived in all; then all events, once quiet.
    func heard(after steps: [(command: String, total: Int)]) async throws -> [PresentedItemEvent] {
        for step in steps {
            try shell(step.command)
            _ = await wait(for: step.total)
        }
        return await settled()
    }
}

extension Fixture {
    /// The URL of the item at `relative` and its presenter's events, once the presenter watches.
    func presented(_ relative: String) async throws -> (URL, EventCollector) {
        let url = url(relative)
        let events = EventCollector(namespace.events(for: url))
        try await Task.sleep(for: .milliseconds(50))
        return (url, events)
    }
}

/// Runs a shell command, as an uncoordinated writer.
func shell(_ command: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(command)")
}

/// `echo >>`, `mv` and `rm` of `doc.txt` by shell commands: changed, moved, deleted, once each.
func expectEchoMoveAndRemove(_ fixture: Fixture, _ events: EventCollector) async throws {
    let (doc, moved) = (fixture.url("doc.txt"), fixture.url("moved.txt"))
    let heard = try await events.heard(after: [
        ("echo 2 >> '\(doc.path)'", 1), ("mv '\(doc.path)' '\(moved.path)'", 2), ("rm '\(moved.path)'", 3),
    ])
    #expect(heard == [.changed(doc), .moved(from: doc, to: moved), .deleted(moved)], "\(heard)")
}

@Suite("Presenters hear about uncoordinated writers, once each")
struct PresenterWatcherTests {
    @Test("echo > file: one didChange")
    func fileChangedByShell() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt", "old\n")
        let events = EventCollector(fixture.namespace.events(for: fixture.url("note.txt")))
        try await Task.sleep(for: .milliseconds(50))
        try shell("echo new > '\(fixture.url("note.txt").path)'")
        _ = await events.wait(for: 1)
        #expect(await events.settled() == [.changed(fixture.url("note.txt"))])
    }

    @Test("mv file: didMove to the new name; rm: deletion")
    func fileMovedAndRemovedByShell() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("a.txt")
        let events = EventCollector(fixture.namespace.events(for: fixture.url("a.txt")))
        try await Task.sleep(for: .milliseconds(50))
        let heard = try await events.heard(after: [
            ("mv '\(fixture.url("a.txt").path)' '\(fixture.url("b.txt").path)'", 1), ("rm '\(fixture.url("b.txt").path)'", 2),
        ])
        #expect(heard == [.moved(from: fixture.url("a.txt"), to: fixture.url("b.txt")), .deleted(fixture.url("b.txt"))])
    }

    @Test("an atomic save by another program (temp file renamed over) is one didChange, not a deletion")
    func atomicReplaceByShell() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("doc.txt", "v1\n")
        let events = EventCollector(fixture.namespace.events(for: fixture.url("doc.txt")))
        try await Task.sleep(for: .milliseconds(50))
        let path = fixture.url("doc.txt").path
        try shell("printf 'v2\\n' > '\(path).tmp' && mv '\(path).tmp' '\(path)'")
        _ = await events.wait(for: 1)
        #expect(await events.settled() == [.changed(fixture.url("doc.txt"))])
    }

    @Test("a file written slowly (truncated, a pause, then written and closed) is one change, not two")
    func slowWriteIsOneChange() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("doc.txt", "old\n")
        try fixture.makeFolder("D")
        let (doc, docEvents) = try await fixture.presented("doc.txt")
        let (folder, folderEvents) = try await fixture.presented("D")
        let slowly = { (path: String) in "exec 3> '\(path)'; sleep 0.02; echo new >&3; exec 3>&-" }
        let heard = try await docEvents.heard(after: [(slowly(doc.path), 1)])
        #expect(heard == [.changed(doc)], "\(heard)")
        let heardInFolder = try await folderEvents.heard(after: [(slowly(folder.path + "/new.txt"), 1)])
        #expect(heardInFolder == [.subitemAppeared(folder.appendingPathComponent("new.txt"))], "\(heardInFolder)")
    }

    @Test("touch inside a package: one didChange for the package")
    func touchInsidePackage() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/body.md")
        try fixture.makeFile("Doc.pkg/nested/deep.txt")
        let events = EventCollector(fixture.namespace.events(for: fixture.url("Doc.pkg")))
        try await Task.sleep(for: .milliseconds(50))
        try shell("touch '\(fixture.url("Doc.pkg/nested/deep.txt").path)'")
        _ = await events.wait(for: 1)
        #expect(await events.settled() == [.changed(fixture.url("Doc.pkg"))])
    }

    @Test("a DocumentKit package save by another process is one didChange")
    func packageSaveIsOneChange() async throws {
        let fixture = try Fixture()
        let url = fixture.url("Doc.pkg")
        try FileWrapper(directoryWithFileWrappers: ["a": FileWrapper(regularFileWithContents: Data("1".utf8))]).write(to: url)
        let events = EventCollector(fixture.namespace.events(for: url))
        try await Task.sleep(for: .milliseconds(50))
        var tree = try FileWrapper(contentsOf: url)
        tree["a"] = FileWrapper(regularFileWithContents: Data("2".utf8))
        try tree.write(to: url)
        _ = await events.wait(for: 1)
        #expect(await events.settled() == [.changed(url)])
    }

    @Test("a presented folder hears of subitems appearing, changing, moving and going")
    func folderSubitems() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Library/old.txt")
        let library = fixture.url("Library")
        let events = EventCollector(fixture.namespace.events(for: library))
        try await Task.sleep(for: .milliseconds(50))
        let heard = try await events.heard(after: [
            ("echo x > '\(library.path)/new.txt'", 1), ("echo y >> '\(library.path)/old.txt'", 2),
            ("mv '\(library.path)/new.txt' '\(library.path)/renamed.txt'", 3), ("rm '\(library.path)/old.txt'", 4),
        ])
        #expect(heard == [
            .subitemAppeared(library.appendingPathComponent("new.txt")),
            .subitemChanged(library.appendingPathComponent("old.txt")),
            .subitemMoved(from: library.appendingPathComponent("new.txt"), to: library.appendingPathComponent("renamed.txt")),
            .subitemDeleted(library.appendingPathComponent("old.txt")),
        ])
    }

    @Test("10,000 presenters in one process register and unregister (entries published per unit, removed with the last)")
    func manyPresenters() async throws {
        let fixture = try Fixture()
        try fixture.makeFolder("many")
        var registrations: [PresenterRegistration] = []
        final class Quiet: FilePresenter {
            let presentedItemURL: URL?
            init(_ url: URL) { presentedItemURL = url }
        }
        for index in 0..<10_000 {
            registrations.append(fixture.namespace.addPresenter(Quiet(fixture.url("many/item-\(index).txt"))))
        }
        #expect(registrations.count == 10_000)
        let presenters = fixture.namespaceFolder.url.appendingPathComponent("presenters")
        let published = try FileManager.default.contentsOfDirectory(atPath: presenters.path).filter { !$0.hasSuffix(".sock") }
        #expect(published.count == 10_000)
        for registration in registrations { registration.remove() }
        let left = try FileManager.default.contentsOfDirectory(atPath: presenters.path).filter { !$0.hasSuffix(".sock") }
        #expect(left.isEmpty, "\(left.prefix(3))")
    }
}
