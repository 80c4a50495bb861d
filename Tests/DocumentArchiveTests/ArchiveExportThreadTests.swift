import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// An export's blocking work runs on a thread of its own: exports waiting for documents that are
/// being written take none of Swift's cooperative threads, and cancelling the task still stops one.
/// (The time limit: before, such exports held every cooperative thread and the test hung.)
@Suite(.timeLimit(.minutes(1))) struct ArchiveExportThreadTests {
    @Test func exportsWaitingForADocumentBeingWrittenLeaveSwiftsThreadsToOtherWork() async throws {
        let folder = try TemporaryDirectory(prefix: "export-thread")
        let package = folder.appending("Trip.note")
        try ArchiveRoundTripTests.makePackage(at: package)
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: folder.appending("ns"), packageExtensions: ["note"]))
        // Another writer holds the package (on a thread of its own) until released.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? coordinator.coordinate(writingItemAt: package) { _ in
                holding.signal()
                release.wait()
            }
        }
        writer.start()
        holding.wait()
        // More exports than Swift's pool has threads, each waiting for the package.
        let count = 3 * ProcessInfo.processInfo.activeProcessorCount + 2
        let exports = (0..<count).map { index in
            Task {
                try await DocumentArchiver.export(itemsAt: [package], to: folder.appending("export-\(index).zip"), coordinator: coordinator)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        // Unrelated work on the pool completes while they wait (it would wait for ever if they held its threads).
        let started = ContinuousClock.now
        let sums = await withTaskGroup(of: Int.self) { group in
            for index in 0..<count { group.addTask { (0...index).reduce(0, +) } }
            return await group.reduce(0, +)
        }
        #expect(sums == (0..<count).map { (0...$0).reduce(0, +) }.reduce(0, +))
        #expect(ContinuousClock.now - started < .seconds(5))
        release.signal()
        for export in exports {
            let summary = try await export.value
            #expect(summary.entryCount > 1)
        }
    }

    @Test func anExportInACancelledTaskWritesNothingAndSaysSo() async throws {
        let folder = try TemporaryDirectory(prefix: "export-thread")
        let package = folder.appending("Trip.note")
        try ArchiveRoundTripTests.makePackage(at: package)
        let archive = folder.appending("Trip.zip")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await DocumentArchiver.export(itemsAt: [package], to: archive)
        }
        switch await task.result {
        case .success(let summary): Issue.record("exported in a cancelled task: \(summary)")
        case .failure(let error): #expect((error as? DocumentKitError)?.code == .cancelled, "\(error)")
        }
        #expect(try folder.contents() == ["Trip.note"])
    }
}
