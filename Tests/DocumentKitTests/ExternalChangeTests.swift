import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// A plain-file document: its content is the file's text.
final class PlainTextDocument: Document<String>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> String {
        String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
    }

    override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
        FileWrapper(regularFileWithContents: Data(content.utf8))
    }
}

/// Records a document's events, to wait for one.
final class EventRecorder: Sendable {
    private let events = Mutex<[DocumentEvent]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init<Content>(_ document: Document<Content>) {
        let stream = document.events()
        let task = Task { [weak self] in
            for await event in stream { self?.events.withLock { $0.append(event) } }
        }
        self.task.withLock { $0 = task }
    }

    deinit { task.withLock { $0?.cancel() } }

    var all: [DocumentEvent] { events.withLock { $0 } }

    func count(_ matches: (DocumentEvent) -> Bool) -> Int { all.filter(matches).count }

    /// Waits until `count` events match (at most `timeout`); whether they did.
    func wait(for matches: @escaping (DocumentEvent) -> Bool, count: Int = 1, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if self.count(matches) >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return self.count(matches) >= count
    }
}

func isReloaded(_ event: DocumentEvent) -> Bool { if case .reloaded = event { true } else { false } }
func isDeleted(_ event: DocumentEvent) -> Bool { if case .deleted = event { true } else { false } }
func isMoved(_ event: DocumentEvent) -> Bool { if case .moved = event { true } else { false } }
func isConflictGained(_ event: DocumentEvent) -> Bool { if case .conflictGained = event { true } else { false } }

/// Runs `script` with `/bin/sh -c` in a process of its own: a writer that does not coordinate.
func shell(_ script: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", script]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "sh -c \(script)")
}

func quoted(_ url: URL) -> String { "'" + url.path.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// A document presents its file: it hears other processes' writes, moves and deletions.
@Suite struct ExternalChangeTests {
    let namespaceFolder: TemporaryDirectory
    let folder: TemporaryDirectory
    let coordinator: FileCoordinator

    init() throws {
        namespaceFolder = try TemporaryDirectory(prefix: "present-ns")
        folder = try TemporaryDirectory(prefix: "present-items")
        coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceFolder.url, packageExtensions: ["text"]))
    }

    /// A plain-text document at `name` holding `text`, opened with the coordinator.
    func openPlain(_ name: String, _ text: String, store: VersionStore? = nil) async throws -> PlainTextDocument {
        let url = folder.appending(name)
        try Data(text.utf8).write(to: url)
        let document = PlainTextDocument(fileURL: url, coordinator: coordinator)
        document.autosavePolicy = nil
        document.versionStore = store
        try await document.open()
        return document
    }

    @Test func aCleanDocumentReloadsAfterAnotherProcessWrites() async throws {
        let document = try await openPlain("a.txt", "one")
        let events = EventRecorder(document)
        // Written in place, as `echo … >` does: truncated, then written. The document ends with the
        // new contents (on a loaded machine the watcher may show the empty state first: see #3's note).
        try shell("printf two > \(quoted(document.fileURL))")
        #expect(await events.wait(for: isReloaded))
        for _ in 0..<500 where document.content != "two" { try await Task.sleep(for: .milliseconds(10)) }
        #expect(document.content == "two")
        #expect(!document.hasUnsavedChanges && document.documentState == .normal)
        try await document.close()
    }

    @Test func aDirtyDocumentKeepsItsEditsAndTheDiskContentsAsAConflictVersion() async throws {
        let store = VersionStore(libraryURL: folder.appending("library"))
        let document = try await openPlain("a.txt", "base", store: store)
        let events = EventRecorder(document)
        try document.update { $0 = "mine" }
        // In one step (a write in place has an empty state between, which could be kept as a
        // conflict version of its own on a loaded machine).
        let url = document.fileURL
        try shell("printf theirs > \(quoted(url)).new && mv \(quoted(url)).new \(quoted(url))")
        #expect(await events.wait(for: isConflictGained))
        #expect(document.content == "mine" && document.hasUnsavedChanges)
        #expect(document.documentState.contains(.inConflict))
        #expect(events.count(isReloaded) == 0)
        let conflicts = try document.unresolvedConflictVersions()
        try #require(conflicts.count == 1)
        #expect(try String(contentsOf: conflicts[0].url, encoding: .utf8) == "theirs")

        try await document.save()

        #expect(try String(contentsOf: document.fileURL, encoding: .utf8) == "mine")
        #expect(document.lastConflictVersion == nil)  // the same conflict is not kept twice
        #expect(try document.unresolvedConflictVersions().map(\.persistentIdentifier) == conflicts.map(\.persistentIdentifier))
        #expect(document.documentState.contains(.inConflict))
        try await document.close()
    }

    @Test func aMoveByAnotherProcessMovesTheDocument() async throws {
        let document = try await openPlain("a.txt", "one")
        let events = EventRecorder(document)
        let destination = folder.appending("b.txt")
        try shell("mv \(quoted(document.fileURL)) \(quoted(destination))")
        #expect(await events.wait(for: isMoved))
        #expect(document.fileURL.standardizedFileURL.path == destination.standardizedFileURL.path)
        try document.update { $0 = "moved" }
        try await document.save()
        #expect(try String(contentsOf: destination, encoding: .utf8) == "moved")
        #expect(!FileManager.default.fileExists(atPath: folder.appending("a.txt").path))
        try await document.close()
    }

    @Test func aDeletionByAnotherProcessKeepsTheContentAndASaveWritesTheFileAgain() async throws {
        let document = try await openPlain("a.txt", "kept")
        let events = EventRecorder(document)
        try shell("rm \(quoted(document.fileURL))")
        #expect(await events.wait(for: isDeleted))
        #expect(document.documentState.contains(.fileDeleted))
        #expect(document.content == "kept")

        try await document.save()

        #expect(try String(contentsOf: document.fileURL, encoding: .utf8) == "kept")
        #expect(!document.documentState.contains(.fileDeleted))
        // Presented again: another write is heard.
        try shell("printf after > \(quoted(document.fileURL))")
        #expect(await events.wait(for: isReloaded))
        for _ in 0..<500 where document.content != "after" { try await Task.sleep(for: .milliseconds(10)) }
        #expect(document.content == "after")
        try await document.close()
    }

    @Test func theDocumentsOwnSaveDoesNotMakeItReload() async throws {
        let document = try await openPlain("a.txt", "one")
        let events = EventRecorder(document)
        try document.update { $0 = "two" }
        try await document.save()
        try document.update { $0 = "three" }
        try await document.save()
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.count(isReloaded) == 0)
        // Then another process's write, in one step (a write in place is two states, empty then
        // full, which a loaded machine may show apart): the one reload is for it.
        let url = document.fileURL
        try shell("printf four > \(quoted(url)).new && mv \(quoted(url)).new \(quoted(url))")
        #expect(await events.wait(for: isReloaded))
        #expect(document.content == "four")
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.count(isReloaded) == 1)
        try await document.close()
    }

    @Test func aPackageDeliveredInPartIsNotLoadedUntilItIsWhole() async throws {
        let url = folder.appending("a.text")
        try await VersionedTextDocument(fileURL: url, content: VersionedText(title: "T", text: "base"), readerVersion: 2).save()
        let staged = folder.appending("staged.text")
        try await VersionedTextDocument(fileURL: staged, content: VersionedText(title: "T", text: "whole"), readerVersion: 2).save()
        let document = try await VersionedTextDocument.open(at: url, coordinator: coordinator)
        document.autosavePolicy = nil
        let events = EventRecorder(document)
        let manifestName = try #require(document.format).manifestName

        // One member first, not the one the manifest records: no mix is loaded.
        try shell("cat \(quoted(staged.appendingPathComponent("text.txt"))) > \(quoted(url.appendingPathComponent("text.txt")))")
        try await Task.sleep(for: .milliseconds(500))
        #expect(events.count(isReloaded) == 0)
        #expect(document.content.text == "base")

        // Then the manifest: the package is whole.
        try shell("cat \(quoted(staged.appendingPathComponent(manifestName))) > \(quoted(url.appendingPathComponent(manifestName)))")
        #expect(await events.wait(for: isReloaded))
        #expect(document.content.text == "whole")
        try await document.close()
    }

    @Test func aCoordinatedReaderGetsTheUnsavedEditsFirst() async throws {
        let document = try await openPlain("a.txt", "saved")
        try document.update { $0 = "unsaved" }
        let reader = FileCoordinator(namespace: coordinator.namespace)
        let text = try reader.coordinate(readingItemAt: document.fileURL) { url in try String(contentsOf: url, encoding: .utf8) }
        #expect(text == "unsaved")
        #expect(!document.hasUnsavedChanges)
        try await document.close()
    }
}
