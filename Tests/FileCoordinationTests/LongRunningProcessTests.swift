#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import RaceTestSupport
import Testing

/// A server runs for months with thousands of documents open, on a cooperative pool of one thread
/// per core: what an open document holds is bounded, nothing blocks the pool, and closing the
/// namespace releases what it holds (issue #16).
@Suite struct LongRunningProcessTests {
    /// What `dk-coordination-child resources` printed for each step: descriptors, threads, watches.
    struct Measures {
        var steps: [String: (fds: Int, threads: Int, watches: Int)] = [:]

        init(_ output: String) {
            for line in output.split(separator: "\n") where line.hasPrefix("measure ") {
                let fields = line.split(separator: " ")
                guard fields.count == 5, let fds = Int(fields[2]), let threads = Int(fields[3]), let watches = Int(fields[4]) else { continue }
                steps[String(fields[1])] = (fds, threads, watches)
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func openingTwoThousandDocumentsHoldsAFewThreadsAndDescriptorsInAllUnderALimitOf1024Descriptors() async throws {
        let folder = try TemporaryDirectory(prefix: "long-running")
        let count = 2_000
        let folders = 200
        // Under `ulimit -n 1024`: 2,000 open documents must not need a descriptor each.
        let child = try Child(
            ["resources", folder.appending("ns").path, "note", folder.appending("library").path, String(count), String(folders), "1024"],
            outputFolder: folder.url)
        let status = await child.exitStatus(timeout: .seconds(170))
        if status == nil { child.killNow() }
        try #require(status == 0, "\(child.output)\n\(child.errorOutput)")
        let measures = Measures(child.output)
        let base = try #require(measures.steps["base"])
        // The bounds of Documentation.docc/LongRunningProcesses.md.
        let descriptorBound = base.fds + 128 + 256 + 48
        let threadBound = base.threads + 34
        for step in ["opened", "saving", "saved"] {
            let measure = try #require(measures.steps[step], "\(child.output)")
            #expect(measure.fds <= descriptorBound, "\(step): \(measure.fds) descriptors, base \(base.fds)")
            #expect(measure.threads <= threadBound, "\(step): \(measure.threads) threads, base \(base.threads)")
            // One watch per folder holding presented documents, and one per presented package
            // (inotify is not recursive: a member written in place is seen only in its package).
            #expect(measure.watches <= folders + count + 2, "\(step): \(measure.watches) watches")
        }
        let closed = try #require(measures.steps["closed"])
        #expect(closed.watches == 0)
        #expect(closed.fds <= base.fds + 24, "closed: \(closed.fds) descriptors, base \(base.fds)")
        let shut = try #require(measures.steps["shut"])
        #expect(shut.fds <= base.fds + 6, "after the namespace's close: \(shut.fds) descriptors, base \(base.fds)")
        #expect(shut.threads < closed.threads, "the presence server's thread ends with the namespace's close")
    }

    @Test func aClosedNamespaceIsReleasedWithItsPresenceServer() async throws {
        let folder = try TemporaryDirectory(prefix: "ns-close")
        let item = folder.appending("a.txt")
        try Data("a".utf8).write(to: item)
        weak var released: CoordinationNamespace?
        let presenters = folder.appending("ns").appendingPathComponent("presenters")
        do {
            let namespace = try CoordinationNamespace(directory: folder.appending("ns"))
            released = namespace
            let registration = namespace.addPresenter(NothingPresenter(url: item))
            // A coordination from another process's point of view finds this one presenting.
            try FileCoordinator(namespace: namespace).coordinate(writingItemAt: item) { _ in }
            let sockets = try FileManager.default.contentsOfDirectory(atPath: presenters.path).filter { $0.hasSuffix(".sock") }
            #expect(sockets.count == 1)
            registration.remove()
            namespace.close()
            let left = try FileManager.default.contentsOfDirectory(atPath: presenters.path).filter { $0.hasSuffix(".sock") }
            #expect(left.isEmpty, "the socket goes with the close")
        }
        // The accept thread let go of what it held: nothing keeps the namespace.
        for _ in 0..<200 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }

    @Test(.timeLimit(.minutes(2)))
    func withThePoolFullOfWritesWaitingForAnotherProcessAnUnrelatedItemAndDocumentStillGetThrough() async throws {
        let folder = try TemporaryDirectory(prefix: "pool-starve")
        let namespaceURL = folder.appending("ns")
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceURL, packageExtensions: ["note"]))
        let a = folder.appending("a.txt")
        let b = folder.appending("b.txt")
        try Data("a".utf8).write(to: a)
        try Data("b".utf8).write(to: b)
        let holder = try Child(["hold", namespaceURL.path, "note", "write", a.path, "30000"], outputFolder: folder.url)
        defer { if !holder.hasExited { holder.killNow() } }
        try #require(await holder.wait(for: "granted", timeout: .seconds(20)) != nil, "\(holder.errorOutput)")

        // More waiting coordinations than the cooperative pool has threads.
        let waiting = 2 * ProcessInfo.processInfo.activeProcessorCount + 4
        let waiters = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<waiting {
                    group.addTask { try await coordinator.coordinate(with: [.writingIntent(with: a)]) { _ in } }
                }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .milliseconds(300))

        // Unrelated work completes while they wait (a deadlock check: the holder keeps A for 30 s).
        let unrelated = Task {
            try await coordinator.coordinate(with: [.writingIntent(with: b)]) { granted in
                try Data("b2".utf8).write(to: granted[0].url)
            }
            let note = RaceNoteDocument(fileURL: folder.appending("c.note"), content: "c", coordinator: coordinator)
            note.autosavePolicy = nil
            try await note.save()
            try note.update { $0 = "c2" }
            try await note.save()
            try await note.close()
            let reopened = try await RaceNoteDocument.open(at: folder.appending("c.note"), coordinator: coordinator)
            defer { Task { try? await reopened.close() } }
            return reopened.content
        }
        let deadline = ContinuousClock.now + .seconds(10)
        var content: String?
        while ContinuousClock.now < deadline, content == nil {
            if holder.hasExited { break }
            try await Task.sleep(for: .milliseconds(20))
            content = try await Self.valueIfDone(unrelated)
        }
        #expect(content == "c2", "unrelated work did not complete while the writes of A waited")
        #expect(!holder.hasExited, "the holder still held A meanwhile")

        holder.release()
        #expect(await holder.exitStatus(timeout: .seconds(20)) == 0)
        try await waiters.value  // every waiting write got its turn
        #expect(try String(contentsOf: b, encoding: .utf8) == "b2")
    }

    /// The task's value if it is done within a moment, else nil.
    private static func valueIfDone<T: Sendable>(_ task: Task<T, any Error>) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await task.value }
            group.addTask {
                try await Task.sleep(for: .milliseconds(50))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// A presenter that does nothing.
private final class NothingPresenter: FilePresenter {
    let presentedItemURL: URL?
    init(url: URL) { presentedItemURL = url }
}
