import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Presenters hear when an item gains or loses versions, or has a conflict resolved.
@Suite struct VersionPresenterTests {
    final class Recorder: VersionPresenter {
        let events = Mutex<[String]>([])
        func presentedItemDidGain(_ version: FileVersion) async {
            events.withLock { $0.append("gain \(version.isUnresolvedConflict ? "conflict" : "version")") }
        }
        func presentedItemDidLose(_ version: FileVersion) async { events.withLock { $0.append("lose") } }
        func presentedItemDidResolveConflict(_ version: FileVersion) async { events.withLock { $0.append("resolve") } }

        /// Waits up to 5 s for `count` events.
        func wait(for count: Int) async -> [String] {
            for _ in 0..<500 {
                let now = events.withLock { $0 }
                if now.count >= count { return now }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return events.withLock { $0 }
        }
    }

    @Test func aPresenterHearsAVersionGainedResolvedAndLostOnceEach() async throws {
        let folder = try TemporaryDirectory()
        let namespace = try CoordinationNamespace(directory: folder.appending("ns"), packageExtensions: [])
        let file = folder.appending("a.txt")
        try Data("one".utf8).write(to: file)
        let store = VersionStore(libraryURL: folder.url)
        let recorder = Recorder()
        let registration = try store.addVersionPresenter(recorder, forItemAt: file, in: namespace)
        defer { registration.remove() }

        // Another store object, as another process would have.
        let other = VersionStore(libraryURL: folder.url)
        let conflict = try other.addVersion(ofItemAt: file, origin: .conflict, isConflict: true)
        #expect(await recorder.wait(for: 1) == ["gain conflict"])
        let resolved = try other.markResolved(conflict, as: .keptCurrent)
        #expect(await recorder.wait(for: 2) == ["gain conflict", "resolve"])
        try other.remove(resolved)
        #expect(await recorder.wait(for: 3) == ["gain conflict", "resolve", "lose"])
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.events.withLock { $0 }.count == 3)
    }

    @Test func aVersionThatArrivesThroughASyncEngineIsHeard() async throws {
        let folder = try TemporaryDirectory()
        let namespace = try CoordinationNamespace(directory: folder.appending("ns"), packageExtensions: [])
        let library = folder.appending("library")
        let elsewhere = folder.appending("elsewhere")
        for url in [library, elsewhere] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data("same".utf8).write(to: url.appendingPathComponent("a.txt"))
        }
        let recorder = Recorder()
        let registration = try VersionStore(libraryURL: library).addVersionPresenter(
            recorder, forItemAt: library.appendingPathComponent("a.txt"), in: namespace)
        defer { registration.remove() }
        // Made on another machine, then copied in as a sync engine would: files one by one.
        let made = try VersionStore(libraryURL: elsewhere).addVersion(ofItemAt: elsewhere.appendingPathComponent("a.txt"))
        let entry = made.url.deletingLastPathComponent()
        let relative = entry.path.dropFirst(elsewhere.path.count)
        let target = URL(fileURLWithPath: library.path + relative)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: made.url, to: target.appendingPathComponent("item"))
        #expect(recorder.events.withLock { $0 }.isEmpty)  // not whole yet: no record
        try FileManager.default.copyItem(at: entry.appendingPathComponent("record.json"), to: target.appendingPathComponent("record.json"))
        #expect(await recorder.wait(for: 1) == ["gain version"])
    }
}
