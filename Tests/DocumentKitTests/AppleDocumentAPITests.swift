import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Issue #13 §5: what an Apple developer looks for on a document: `revert(toContentsOf:ofType:)`,
/// `fileType`, `fileModificationDate`, `isDocumentEdited`, `hasUnautosavedChanges`, and undo.
@Suite struct AppleDocumentAPITests {
    /// A text document whose drafts go next to its file.
    final class Text: Document<String>, @unchecked Sendable {
        override func read(from fileWrapper: FileWrapper) throws -> String {
            String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
        }
        override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
            FileWrapper(regularFileWithContents: Data(content.utf8))
        }
        override var autosaveDraftsFolder: URL { fileURL.deletingLastPathComponent().appendingPathComponent("drafts") }
    }

    let folder: TemporaryDirectory
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.appending("letter.txt")
        try Data("saved".utf8).write(to: url)
    }

    func open() async throws -> Text {
        let document = Text(fileURL: url)
        document.autosavePolicy = nil
        try await document.open()
        return document
    }

    @Test("revert(toContentsOf:ofType:) of the document's file discards the unsaved changes and the undo steps")
    func revertToTheFileDiscardsChanges() async throws {
        let document = try await open()
        try document.update { $0 = "unsaved" }
        document.undoManager.registerUndo(withTarget: document) { try? $0.update { $0 = "saved" } }
        #expect(document.isDocumentEdited && document.undoManager.canUndo)

        try await document.revert(toContentsOf: url, ofType: "public.plain-text")

        #expect(document.content == "saved")
        #expect(!document.isDocumentEdited && !document.hasUnsavedChanges)
        #expect(!document.undoManager.canUndo)
        #expect(document.fileType == "public.plain-text")
        try await document.close()
    }

    @Test("revert to another file takes its content as one unsaved change of the document's own file")
    func revertToAnotherFileIsAnUnsavedChange() async throws {
        let other = folder.appending("older.txt")
        try Data("older".utf8).write(to: other)
        let document = try await open()

        try await document.revert(toContentsOf: other)

        #expect(document.content == "older" && document.isDocumentEdited)
        #expect(document.fileURL == url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "saved")  // nothing written yet
        try await document.save()
        #expect(try String(contentsOf: url, encoding: .utf8) == "older")
        #expect(try String(contentsOf: other, encoding: .utf8) == "older")
        try await document.close()
    }

    @Test("a revert that can't read keeps the document and its unsaved changes")
    func aFailedRevertKeepsTheEdits() async throws {
        let document = try await open()
        try document.update { $0 = "unsaved" }
        await #expect(throws: DocumentKitError.self) {
            try await document.revert(toContentsOf: folder.appending("missing.txt"))
        }
        #expect(document.content == "unsaved" && document.isDocumentEdited)
        try await document.close(discardingChanges: true)
    }

    @Test("fileType is the file name's extension unless set, and fileModificationDate is the file's as last read or saved")
    func fileTypeAndModificationDate() async throws {
        let date = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
        let document = try await open()
        #expect(document.fileType == "txt")
        #expect(document.fileModificationDate == date)
        document.fileType = "org.example.letter"
        #expect(document.fileType == "org.example.letter")

        try document.update { $0 = "changed" }
        try await document.save()
        let saved = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date)
        #expect(document.fileModificationDate.map { abs($0.timeIntervalSince(saved)) < 0.001 } == true)
        #expect(document.fileModificationDate != date)
        try await document.close()
    }

    @Test("after an autosave to the draft, hasUnautosavedChanges is false while isDocumentEdited stays true")
    func hasUnautosavedChangesFollowsAutosaves() async throws {
        let clock = ManualAutosaveClock()
        let document = Text(fileURL: folder.appending("new.txt"), content: "draft")
        document.autosavePolicy = AutosavePolicy(quietPeriod: .seconds(2), clock: clock)
        #expect(document.isDocumentEdited && document.hasUnautosavedChanges)
        await clock.advance(by: .seconds(2))
        _ = try #require(document.autosavedContentsURL)
        #expect(document.isDocumentEdited && !document.hasUnautosavedChanges)
        try document.update { $0 += " and more" }
        #expect(document.hasUnautosavedChanges)
        try await document.save()
        #expect(!document.isDocumentEdited && !document.hasUnautosavedChanges)
        try await document.close()
    }

    /// Changes the text the way an AppKit app does: change, then register the change back.
    static func setText(_ text: String, of document: Text) {
        let previous = document.content
        try? document.update { $0 = text }
        document.undoManager.registerUndo(withTarget: document) { setText(previous, of: $0) }
    }

    @Test("an undo registered for a change is counted once: undoing it back to the saved state leaves the document clean")
    func undoAndRedoCountChangesAsNSDocumentDoes() async throws {
        let document = try await open()
        Self.setText("edited", of: document)
        document.undoManager.setActionName("Typing")
        #expect(document.isDocumentEdited && document.undoManager.undoActionName == "Typing")

        document.undoManager.undo()
        #expect(document.content == "saved" && !document.isDocumentEdited)
        #expect(document.undoManager.canRedo && document.undoManager.redoActionName == "Typing")

        document.undoManager.redo()
        #expect(document.content == "edited" && document.isDocumentEdited)
        document.undoManager.undo()
        #expect(document.content == "saved" && !document.isDocumentEdited)
        try await document.close()
    }

    @Test("registering an undo for a change made outside update(_:) marks the document edited")
    func registeringAnUndoMarksTheDocumentEdited() async throws {
        let document = try await open()
        document.undoManager.registerUndo(withTarget: document) { _ in }
        #expect(document.isDocumentEdited)
        document.undoManager.undo()
        #expect(!document.isDocumentEdited)
        // A group of several registrations is one change and one undo.
        document.undoManager.beginUndoGrouping()
        document.undoManager.registerUndo(withTarget: document) { _ in }
        document.undoManager.registerUndo(withTarget: document) { _ in }
        document.undoManager.endUndoGrouping()
        #expect(document.isDocumentEdited)
        document.undoManager.undo()
        #expect(!document.isDocumentEdited && !document.undoManager.canUndo)
        try await document.close()
    }

    @Test("a reload after another program's write forgets the undo steps, as NSDocument's revert does")
    func aReloadForgetsTheUndoSteps() async throws {
        let namespace = try TemporaryDirectory(prefix: "undo-ns")
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespace.url))
        let document = Text(fileURL: url, coordinator: coordinator)
        document.autosavePolicy = nil
        try await document.open()
        Self.setText("mine", of: document)
        try await document.save()
        #expect(document.undoManager.canUndo)
        let events = document.events()
        let reloaded = Task { () -> Bool in
            for await event in events { if case .reloaded = event { return true } }
            return false
        }
        try shell("printf theirs > \(quoted(url))")
        #expect(await reloaded.value)
        #expect(!document.undoManager.canUndo)
        for _ in 0..<500 where document.content != "theirs" { try await Task.sleep(for: .milliseconds(10)) }
        #expect(document.content == "theirs")
        try await document.close()
    }
}
