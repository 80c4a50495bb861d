import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// The open-document cache of a long-running process (issue #16): one object per file, opened
/// on demand, pinned while used, closed (and saved) when idle or beyond capacity.
@Suite struct DocumentCacheTests {
    let folder: TemporaryDirectory
    let coordinator: FileCoordinator
    /// How many times the cache's opener ran.
    let opens = OpenCount()

    init() throws {
        folder = try TemporaryDirectory(prefix: "cache")
        coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: folder.appending("ns")))
    }

    func makeCache(capacity: Int = 10, idleTimeout: Duration = .seconds(60)) -> DocumentCache<String, PlainTextDocument> {
        let coordinator = self.coordinator
        let opens = self.opens
        return DocumentCache<String, PlainTextDocument>(capacity: capacity, idleTimeout: idleTimeout) { url in
            opens.add()
            let document = try await PlainTextDocument.open(at: url, coordinator: coordinator)
            document.autosavePolicy = nil
            return document
        }
    }

    func file(_ name: String, _ text: String) throws -> URL {
        let url = folder.appending(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func twoURLsOfOneFileThroughASymbolicLinkGiveTheSameDocument() async throws {
        let url = try file("a.txt", "a")
        let link = folder.appending("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
        let cache = makeCache()
        let first = try await cache.withDocument(at: url) { ObjectIdentifier($0) }
        let second = try await cache.withDocument(at: link) { ObjectIdentifier($0) }
        let third = try await cache.withDocument(at: folder.url.appendingPathComponent("./sub/../a.txt")) { ObjectIdentifier($0) }
        #expect(first == second && second == third)
        #expect(opens.value == 1)
        #expect(await cache.count == 1)
        try await cache.closeAll()
    }

    @Test func concurrentFirstUsesOfAFileOpenItOnce() async throws {
        let url = try file("a.txt", "a")
        let cache = makeCache()
        let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.withDocument(at: url) { ObjectIdentifier($0) } } }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(identities.count == 1)
        #expect(opens.value == 1)
        try await cache.closeAll()
    }

    @Test func beyondCapacityTheLeastRecentlyUsedIsClosedAndSavedButNeverAPinnedOne() async throws {
        let a = try file("a.txt", "a")
        let b = try file("b.txt", "b")
        let c = try file("c.txt", "c")
        let cache = makeCache(capacity: 1)
        let (aDocument, bDocument) = try await cache.withDocument(at: a) { aDocument in
            try aDocument.update { $0 = "a edited" }
            // A is pinned: using B (over capacity) does not close it.
            let bDocument = try await cache.withDocument(at: b) { $0 }
            #expect(aDocument.documentState != .closed)
            return (aDocument, bDocument)
        }
        // A and B are unpinned now; using C closes the least recently used of them, then the other.
        _ = try await cache.withDocument(at: c) { $0.content }
        for _ in 0..<500 where await cache.statistics.closed < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await cache.count == 1)
        #expect(aDocument.documentState == .closed && bDocument.documentState == .closed)
        #expect(try String(contentsOf: a, encoding: .utf8) == "a edited", "closing saved the unsaved edit")
        #expect(await cache.statistics.closed == 2)
        try await cache.closeAll()
    }

    @Test func aDocumentIdleForLongerThanTheTimeoutIsSavedAndClosed() async throws {
        let url = try file("a.txt", "a")
        let cache = makeCache(idleTimeout: .milliseconds(100))
        let document = try await cache.withDocument(at: url) { document in
            try document.update { $0 = "edited" }
            return document
        }
        for _ in 0..<500 where await cache.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await cache.count == 0)
        for _ in 0..<500 where document.documentState != .closed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(document.documentState == .closed)
        #expect(try String(contentsOf: url, encoding: .utf8) == "edited")
        // Used again: opened anew.
        #expect(try await cache.withDocument(at: url) { $0.content } == "edited")
        #expect(opens.value == 2)
        try await cache.closeAll()
    }

    @Test func closeAllSavesEveryUnsavedDocumentAndClosesIt() async throws {
        let urls = try (0..<5).map { try file("n\($0).txt", "\($0)") }
        let cache = makeCache()
        var documents: [PlainTextDocument] = []
        for url in urls {
            documents.append(try await cache.withDocument(at: url) { document in
                try document.update { $0 += " edited" }
                return document
            })
        }
        try await cache.closeAll()
        #expect(await cache.count == 0)
        for (index, url) in urls.enumerated() {
            #expect(try String(contentsOf: url, encoding: .utf8) == "\(index) edited")
            #expect(documents[index].documentState == .closed)
        }
    }

    @Test func aDocumentMovedOnDiskIsFoundAtItsNewPlace() async throws {
        let url = try file("a.txt", "a")
        let cache = makeCache()
        let first = try await cache.withDocument(at: url) { $0 }
        let moved = folder.appending("b.txt")
        try shell("mv \(quoted(url)) \(quoted(moved))")
        for _ in 0..<500 where first.fileURL.lastPathComponent != "b.txt" { try await Task.sleep(for: .milliseconds(10)) }
        let second = try await cache.withDocument(at: moved) { $0 }
        #expect(first === second)
        #expect(opens.value == 1)
        // The old place holds nothing now.
        await #expect(throws: (any Error).self) { try await cache.withDocument(at: url) { $0.content } }
        try await cache.closeAll()
    }
}

/// A count the cache's opener adds to.
final class OpenCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
