import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A save never re-creates an item that moved or vanished since the document read it (issue 12):
/// it follows a move made while it waited, and fails when the item is gone.
@Suite struct SaveOfAMovedItemTests {
    let namespaceFolder: TemporaryDirectory
    let folder: TemporaryDirectory
    let namespace: CoordinationNamespace

    init() throws {
        namespaceFolder = try TemporaryDirectory(prefix: "moved-save-ns")
        folder = try TemporaryDirectory(prefix: "moved-save-items")
        namespace = try CoordinationNamespace(directory: namespaceFolder.url, packageExtensions: [])
    }

    /// A document of `a.txt` holding "read", opened without presenting it (what it learns of the
    /// item is only what its own save's coordination tells it), then edited to "edited".
    func openEdited() async throws -> PlainTextDocument {
        let url = folder.appending("a.txt")
        try Data("read".utf8).write(to: url)
        let document = PlainTextDocument(fileURL: url, coordinator: FileCoordinator(namespace: namespace))
        document.autosavePolicy = nil
        document.presentsFile = false
        try await document.open()
        try document.update { $0 = "edited" }
        return document
    }

    /// Saves `document` while another coordinator holds its file; `meanwhile` runs while the save waits.
    func saveWhileHeld(_ document: PlainTextDocument, meanwhile: () throws -> Void) async throws -> Result<Void, DocumentKitError> {
        let url = document.fileURL
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread { [namespace] in
            try? FileCoordinator(namespace: namespace).coordinate(writingItemAt: url) { _ in
                holding.signal()
                release.wait()
            }
        }
        holder.start()
        holding.wait()
        let save = Task { () -> Result<Void, DocumentKitError> in
            do throws(DocumentKitError) { try await document.save() } catch { return .failure(error) }
            return .success(())
        }
        try await Task.sleep(for: .milliseconds(500))  // the save waits for the holder
        try meanwhile()
        release.signal()
        return await save.value
    }

    @Test func aSaveThatWaitedWhileAProgramRenamedTheItemWritesItAtItsNewName() async throws {
        let document = try await openEdited()
        let events = EventRecorder(document)
        let moved = folder.appending("b.txt")

        let result = try await saveWhileHeld(document) { try shell("mv \(quoted(document.fileURL)) \(quoted(moved))") }

        #expect(throws: Never.self) { try result.get() }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("a.txt").path), "the save re-created the old name")
        #expect(try String(contentsOf: moved, encoding: .utf8) == "edited")
        #expect(document.fileURL.standardizedFileURL.path == moved.standardizedFileURL.path)
        #expect(await events.wait(for: isMoved))
        #expect(!document.hasUnsavedChanges)
        try await document.close()
    }

    @Test func aSaveThatWaitedWhileTheItemWasDeletedFailsAndKeepsTheEdits() async throws {
        let document = try await openEdited()
        let url = document.fileURL

        let result = try await saveWhileHeld(document) { try shell("rm \(quoted(url))") }

        #expect(throws: DocumentKitError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.code == .notFound)
            #expect(error.path == url.path)
            #expect(error.description.contains("deleted"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: url.path), "the save re-created the deleted item")
        #expect(document.content == "edited" && document.hasUnsavedChanges)
        #expect(document.documentState.contains(.savingError))
        try await document.close(discardingChanges: true)
    }

    @Test func aSaveOfAnItemDeletedSinceTheDocumentReadItFailsWithoutReCreatingIt() async throws {
        let document = try await openEdited()
        let url = document.fileURL
        try shell("rm \(quoted(url))")

        await #expect(throws: DocumentKitError.self) { try await document.save() }

        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(document.content == "edited" && document.hasUnsavedChanges)
        try await document.close(discardingChanges: true)
    }
}
