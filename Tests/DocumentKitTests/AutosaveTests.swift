import Dispatch
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// A plain-text document for the lifecycle tests.
final class TextDocument: Document<String>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> String {
        String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
    }
    override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
        FileWrapper(regularFileWithContents: Data(content.utf8))
    }
}

/// Autosave, driven by a manual clock: debounce, maximum delay, change tokens, failures.
@Suite struct AutosaveTests {
    let folder: TemporaryDirectory
    let url: URL
    let clock = ManualAutosaveClock()

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.appending("a.txt")
        try Data("start".utf8).write(to: url)
    }

    func open(options: SaveOptions = SaveOptions()) async throws -> TextDocument {
        let document = TextDocument(fileURL: url, saveOptions: options)
        document.autosavePolicy = AutosavePolicy(quietPeriod: .seconds(2), maximumDelay: .seconds(10), retryDelay: .seconds(1), clock: clock)
        try await document.open()
        return document
    }

    func onDisk() throws -> String { try String(contentsOf: url, encoding: .utf8) }

    @Test func aChangeIsSavedAfterTheQuietPeriodAndEachChangeStartsTheWaitAgain() async throws {
        let document = try await open()
        try document.update { $0 = "one" }
        await clock.advance(by: .seconds(1))
        try document.update { $0 = "two" }  // the wait starts again
        await clock.advance(by: .milliseconds(1500))
        #expect(try onDisk() == "start" && document.hasUnsavedChanges)
        await clock.advance(by: .milliseconds(600))
        #expect(try onDisk() == "two")
        #expect(!document.hasUnsavedChanges)
        try await document.close()
    }

    @Test func constantTypingStillSavesAtTheMaximumDelay() async throws {
        let document = try await open()
        for index in 1...11 {
            try document.update { $0 = "typing \(index)" }
            await clock.advance(by: .seconds(1))
        }
        // Never 2 s of quiet, but 10 s after the first change the autosave ran.
        #expect(try onDisk().hasPrefix("typing 1"))
        #expect(try onDisk() != "start")
        try await document.close(discardingChanges: true)
    }

    @Test func undoingBackToTheSavedStateIsCleanAndANewChangeAfterAnUndoIsNot() async throws {
        let document = try await open()
        document.autosavePolicy = nil
        try document.update { $0 = "edit" }
        try document.update(as: .undone) { $0 = "start" }
        #expect(!document.hasUnsavedChanges)
        try document.update(as: .redone) { $0 = "edit" }
        #expect(document.hasUnsavedChanges)
        try document.update(as: .undone) { $0 = "start" }
        try document.update { $0 = "other" }
        #expect(document.hasUnsavedChanges)
        document.updateChangeCount(.cleared)
        #expect(!document.hasUnsavedChanges)
        try await document.close(discardingChanges: true)
    }

    @Test func anEditMadeWhileASaveIsWrittenKeepsTheDocumentDirtyAfterIt() async throws {
        let document = try await open()
        document.autosavePolicy = nil
        try document.update { $0 = "saved" }
        let token = document.changeCountToken()
        try document.update { $0 = "saved, then more" }
        document.updateChangeCount(withToken: token, for: .save)
        #expect(document.hasUnsavedChanges)
        try await document.close(discardingChanges: true)
    }

    @Test func anEditDuringAnAutosaveInFlightStaysUnsavedAndIsAutosavedNext() async throws {
        let namespace = try CoordinationNamespace(directory: folder.appending("ns"), packageExtensions: [])
        let document = TextDocument(fileURL: url, coordinator: FileCoordinator(namespace: namespace))
        document.autosavePolicy = AutosavePolicy(quietPeriod: .seconds(2), maximumDelay: .seconds(10), clock: clock)
        document.presentsFile = false
        try await document.open()
        // Another writer holds the file: the autosave, once started, waits for it.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? FileCoordinator(namespace: namespace).coordinate(writingItemAt: url) { _ in
                holding.signal()
                release.wait()
            }
        }
        holder.start()
        holding.wait()
        try document.update { $0 = "first" }
        await clock.advance(by: .seconds(2))  // the autosave of "first" starts and waits
        try document.update { $0 = "second" }  // made while that save is in flight
        release.signal()
        for _ in 0..<500 where try onDisk() != "first" { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try onDisk() == "first")
        #expect(document.hasUnsavedChanges)  // "second" is not saved by the save of "first"
        await clock.advance(by: .seconds(2))
        #expect(try onDisk() == "second")
        #expect(!document.hasUnsavedChanges)
        try await document.close()
    }

    @Test func aFailedAutosaveKeepsTheEditsReportsThemAndSucceedsWhenSpaceReturns() async throws {
        let faults = FaultInjector()
        let document = try await open(options: SaveOptions(fileSystem: faults.fileSystem))
        let events = document.events()
        faults.fail(.write, with: .noSpace)
        try document.update { $0 = "precious" }
        await clock.advance(by: .seconds(2))
        #expect(document.documentState.contains(.savingError))
        #expect(document.lastSaveError?.code == .noSpace)
        #expect(document.content == "precious" && document.hasUnsavedChanges)
        #expect(try onDisk() == "start")
        await clock.advance(by: .seconds(1))  // first retry: still failing
        #expect(try onDisk() == "start")
        faults.reset()
        await clock.advance(by: .seconds(2))  // second retry, after twice the delay
        #expect(try onDisk() == "precious")
        #expect(!document.documentState.contains(.savingError) && !document.hasUnsavedChanges)
        try await document.close()
        var seen: [String] = []
        for await event in events {
            switch event {
            case .saveFailed(let operation, let error): seen.append("failed \(operation.rawValue) \(error.code)")
            case .saved(let operation): seen.append("saved \(operation.rawValue)")
            case .closed: seen.append("closed")
            default: break
            }
        }
        #expect(seen == ["failed autosaveInPlace noSpace", "failed autosaveInPlace noSpace", "saved autosaveInPlace", "closed"])
    }

    @Test func aNewDocumentNeverSavedAutosavesElsewhereAndLeavesItsPlaceEmpty() async throws {
        let drafts = folder.appending("drafts")
        final class Draft: Document<String>, @unchecked Sendable {
            override func read(from fileWrapper: FileWrapper) throws -> String { String(decoding: try fileWrapper.regularFileContents, as: UTF8.self) }
            override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
                FileWrapper(regularFileWithContents: Data(content.utf8))
            }
            override var autosaveDraftsFolder: URL { fileURL.deletingLastPathComponent().appendingPathComponent("drafts") }
        }
        let place = folder.appending("new.txt")
        let document = Draft(fileURL: place, content: "draft")
        document.autosavePolicy = AutosavePolicy(quietPeriod: .seconds(2), clock: clock)
        await clock.advance(by: .seconds(2))
        let draft = try #require(document.autosavedContentsURL)
        #expect(draft.deletingLastPathComponent().deletingLastPathComponent().path == drafts.path)  // drafts/ID/draft.txt
        #expect(try String(contentsOf: draft, encoding: .utf8) == "draft")
        #expect(!FileManager.default.fileExists(atPath: place.path))
        #expect(document.hasUnsavedChanges)  // its own file is still to be saved
        try await document.save()
        #expect(try String(contentsOf: place, encoding: .utf8) == "draft")
        #expect(!FileManager.default.fileExists(atPath: draft.path))  // the save made the draft useless
        try await document.close()
    }
}

/// Events, save as and save to.
@Suite struct DocumentEventTests {
    @Test func saveAsMovesTheDocumentAndSaveToLeavesItWhereItIs() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("a.txt")
        try Data("one".utf8).write(to: url)
        let document = TextDocument(fileURL: url)
        document.autosavePolicy = nil
        try await document.open()
        try document.update { $0 = "two" }
        let copy = folder.appending("copy.txt")
        try await document.save(to: copy, for: .saveTo)
        #expect(document.fileURL == url && document.hasUnsavedChanges)
        #expect(try String(contentsOf: copy, encoding: .utf8) == "two")
        let moved = folder.appending("b.txt")
        try await document.save(to: moved, for: .saveAs)
        #expect(document.fileURL == moved && !document.hasUnsavedChanges)
        #expect(try String(contentsOf: url, encoding: .utf8) == "one")
        try document.update { $0 = "three" }
        try await document.save()
        #expect(try String(contentsOf: moved, encoding: .utf8) == "three")
        await #expect(throws: DocumentKitError.self) { try await document.save(to: url, for: .save) }
        try await document.close()
    }

    @Test func eventsArriveInOrderAndEndWithClose() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("a.txt")
        try Data("one".utf8).write(to: url)
        let store = VersionStore(libraryURL: folder.url)
        let document = TextDocument(fileURL: url)
        document.autosavePolicy = nil
        document.versionStore = store
        let events = document.events()
        try await document.open()
        try Data("theirs".utf8).write(to: url)  // another program
        try document.update { $0 = "mine" }
        try await document.save()
        #expect(document.documentState.contains(.inConflict))
        let conflict = try #require(document.lastConflictVersion)
        try await document.resolveConflict(conflict, by: .keepCurrent)
        #expect(!document.documentState.contains(.inConflict))
        try await document.close()
        var names: [String] = []
        for await event in events {
            switch event {
            case .opened: names.append("opened")
            case .saved(let operation): names.append("saved \(operation.rawValue)")
            case .conflictGained: names.append("conflict gained")
            case .conflictResolved: names.append("conflict resolved")
            case .stateChanged(let state): names.append("state \(state)")
            case .closed: names.append("closed")
            default: names.append("\(event)")
            }
        }
        #expect(names == ["opened", "state inConflict", "conflict gained", "saved save", "conflict resolved", "state normal", "state closed", "closed"])
    }
}
