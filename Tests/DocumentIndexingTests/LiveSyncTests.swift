@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// ``DocumentIndex/sync()`` of a live index: every change made before the call is in the index
/// when it returns, whether or not a watch covers the package that changed.
@Suite("Live index sync")
struct LiveSyncTests {
    @Test("sync() past the package watch budget sees a member removed from a package in a subfolder and put back")
    func syncBeyondWatchBudget() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("Sub/A.note", title: "A", body: "hello")
        try library.writeNote("B.note", title: "B")
        var configuration = library.configuration()
        configuration.packageWatchBudget = 0  // no package watched: degraded
        configuration.sweepInterval = .seconds(600)  // and no sweep to hide what sync() misses
        let index = try DocumentIndex(configuration)
        let (mirror, consumer) = LiveMirror.following(index.updates())
        defer { consumer.cancel() }
        try #require(await waitUntil { await mirror.hasGathered })
        #expect(await index.entry(atRelativePath: "Sub/A.note")?.state == .current)

        try FileManager.default.removeItem(atPath: library.path("Sub/A.note/body.txt"))
        try await index.sync()
        let state = await index.entry(atRelativePath: "Sub/A.note")?.state
        guard case .incomplete? = state else {
            Issue.record("after sync() Sub/A.note is \(String(describing: state)), not incomplete")
            return
        }
        try Data("hello".utf8).write(to: URL(fileURLWithPath: library.path("Sub/A.note/body.txt")))
        try await index.sync()
        #expect(differences(await index.entries, try await configuration.freshScan(), "synced", "fresh") == [])
        await index.close()
    }
}
