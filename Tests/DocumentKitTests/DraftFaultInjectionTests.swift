import DocumentKitTesting
import Foundation
import SystemPackage
import Testing

@testable import DocumentKit

/// An autosave to a draft, to run with a failure injected at each of its system calls in turn.
enum DraftAutosaveScenario: String, CaseIterable, CustomTestStringConvertible {
    /// A document never saved: its first autosave creates the drafts folder and the entry.
    case newDocument
    /// A never-saved document's second autosave: the entry exists, its record and draft are replaced.
    case secondAutosave
    /// A saved document whose policy doesn't autosave in place.
    case autosaveElsewhere

    var testDescription: String { rawValue }

    /// At least this many calls (the draft's own ones and the save of its content).
    var minimumCalls: Int { self == .newDocument ? 20 : 12 }
}

/// Every system call of drafts (their entry, lock, record, content and removal) fails in turn:
/// the document's file and its edits survive, the error names the item, and a later success
/// leaves exactly one whole draft, or none.
@Suite struct DraftFaultInjectionTests {
    static let edited = "the unsaved edits"

    /// A document of `scenario` in `folder`, ready to autosave "the unsaved edits", with the
    /// injector reset (the setup's calls are not counted).
    private func prepare(_ scenario: DraftAutosaveScenario, in folder: URL) async throws -> (RecoveryTextDocument, FaultInjector) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("letter.txt")
        let faults = FaultInjector()
        let options = SaveOptions(fileSystem: faults.fileSystem)
        let policy = AutosavePolicy(quietPeriod: .seconds(3600), clock: ManualAutosaveClock(), autosavesInPlace: scenario != .autosaveElsewhere)
        let document: RecoveryTextDocument
        switch scenario {
        case .newDocument, .secondAutosave:
            document = RecoveryTextDocument(fileURL: url, content: "", saveOptions: options)
            document.autosavePolicy = policy
            if scenario == .secondAutosave {
                try document.update { $0 = "autosaved before" }
                #expect(await document.autosave())
            }
        case .autosaveElsewhere:
            try Data("saved".utf8).write(to: url)
            document = try await RecoveryTextDocument.open(at: url, saveOptions: options)
            document.autosavePolicy = policy
        }
        try document.update { $0 = Self.edited }
        faults.reset()
        return (document, faults)
    }

    private func contents(_ url: URL) -> Data? { FileManager.default.contents(atPath: url.path) }

    /// The visible entries of the drafts folder, and whether a hidden one (an entry being created) is left.
    private func entries(_ drafts: URL) -> (visible: [String], hidden: [String]) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: drafts.path)) ?? []
        return (names.filter { !$0.hasPrefix(".") }.sorted(), names.filter { $0.hasPrefix(".") })
    }

    /// The document's one draft holds `text`: its record names it, and it is the one live entry.
    private func expectOneWholeDraft(of document: RecoveryTextDocument, holding text: String, _ context: String) throws {
        let drafts = document.autosaveDraftsFolder
        let draft = try #require(document.autosavedContentsURL, "no draft claimed: \(context)")
        #expect(contents(draft) == Data(text.utf8), "the claimed draft doesn't hold the edits: \(context)")
        let record = try JSONSerialization.jsonObject(with: Data(contentsOf: draft.deletingLastPathComponent().appendingPathComponent("draft.json")))
        #expect((record as? [String: Any])?["draft"] as? String == draft.lastPathComponent, "\(context)")
        #expect(entries(drafts).visible == [draft.deletingLastPathComponent().lastPathComponent], "\(entries(drafts)): \(context)")
        #expect(entries(drafts).hidden.isEmpty, "\(entries(drafts)): \(context)")
        let scan = RecoverableDraft.scan(drafts)
        #expect(scan.live == 1 && scan.damaged.isEmpty && scan.drafts.isEmpty, "\(scan): \(context)")
    }

    @Test("a failure at any call of an autosave to a draft keeps the file and the edits, and names the item",
          arguments: DraftAutosaveScenario.allCases)
    func failureAtEveryCallOfAnAutosaveToADraft(scenario: DraftAutosaveScenario) async throws {
        let base = try TemporaryDirectory(prefix: "dk-draft-faults")
        let (clean, cleanFaults) = try await prepare(scenario, in: base.appending("clean"))
        #expect(await clean.autosave())
        let trace = cleanFaults.trace
        let count = trace.count
        #expect(count >= scenario.minimumCalls, "only \(count) calls enumerated: \(trace)")
        #expect(trace.contains { $0.name.hasSuffix("draft.json") }, "the record's calls are not enumerated: \(trace)")
        if scenario == .newDocument {
            #expect(trace.contains { $0.call == .lock }, "the lock is not enumerated: \(trace)")
            #expect(trace.contains { $0.call == .makeDirectory }, "the entry's creation is not enumerated: \(trace)")
        }
        try expectOneWholeDraft(of: clean, holding: Self.edited, "clean run")
        var failed = 0
        var committed: [FaultInjector.Call] = []
        for k in 1...count {
            let folder = base.appending("run-\(k)")
            let (document, faults) = try await prepare(scenario, in: folder)
            let file = document.fileURL
            let original = contents(file)
            let before = document.autosavedContentsURL
            faults.fail(call: k, with: .ioError)
            let context = "call \(k) of \(count), \(trace[k - 1]), failing with EIO"
            if await document.autosave() {
                // Only a step after the draft was committed may fail harmlessly (the save
                // machinery's cleanup and checks); the draft then holds the edits.
                committed.append(trace[k - 1])
                #expect([.status, .unlink, .close].contains(trace[k - 1].call), "the autosave succeeded although \(context) failed")
                try expectOneWholeDraft(of: document, holding: Self.edited, "\(context)")
            } else {
                failed += 1
                let error = try #require(document.lastSaveError, "no error reported: \(context)")
                #expect(error.path.hasPrefix(folder.path), "\(context): \(error)")
                #expect(error.description.contains(error.path), "\(context): \(error)")
                #expect(error.errno == .ioError, "\(context): \(error)")
                #expect(document.documentState.contains(.savingError), "\(context)")
                // No draft claimed but an existing one: the one before, if any, untouched or replaced whole.
                if let claimed = document.autosavedContentsURL {
                    #expect(claimed == before, "\(context)")
                    #expect(contents(claimed) != nil, "a draft is claimed that isn't there: \(context)")
                }
            }
            #expect(contents(file) == original, "the document's file changed: \(context)")
            #expect(document.hasUnsavedChanges, "\(context)")
            #expect(document.content == Self.edited, "\(context)")
            // The next autosave (nothing fails now) succeeds, and leaves one whole draft.
            #expect(await document.autosave(), "\(context): then \(String(describing: document.lastSaveError))")
            #expect(document.lastSaveError == nil, "\(context)")
            try expectOneWholeDraft(of: document, holding: Self.edited, "after \(context)")
            // And the save in place removes it.
            try await document.save()
            #expect(contents(file) == Data(Self.edited.utf8), "\(context)")
            #expect(entries(document.autosaveDraftsFolder).visible.isEmpty, "\(entries(document.autosaveDraftsFolder)): \(context)")
            try await document.close()
            try? FileManager.default.removeItem(at: folder)
        }
        #expect(failed + committed.count == count && committed.count <= 8, "harmless: \(committed)")
        print("\(scenario): \(count) calls, \(failed) failed the autosave, harmless: \(committed)")
    }

    @Test("a failure at any call of a save in place and of its draft's removal keeps the saved file whole and names the item")
    func failureAtEveryCallOfASaveAndTheDraftsRemoval() async throws {
        let base = try TemporaryDirectory(prefix: "dk-draft-removal-faults")
        /// A saved document with a draft of its unsaved edits, about to be saved in place.
        func prepare(in folder: URL) async throws -> (RecoveryTextDocument, FaultInjector, URL) {
            let (document, faults) = try await self.prepare(.autosaveElsewhere, in: folder)
            #expect(await document.autosave())
            let draft = try #require(document.autosavedContentsURL)
            faults.reset()
            return (document, faults, draft)
        }
        let (clean, cleanFaults, cleanDraft) = try await prepare(in: base.appending("clean"))
        try await clean.save()
        let trace = cleanFaults.trace
        let count = trace.count
        // The removal starts by opening the drafts folder, which the save never touches.
        let draftsPath = cleanDraft.deletingLastPathComponent().deletingLastPathComponent().path
        let removalStart = try #require(trace.firstIndex { $0.name == draftsPath }, "the removal's calls are not enumerated: \(trace)")
        let removalCalls = trace[removalStart...]
        #expect(removalCalls.count >= 8, "only \(removalCalls.count) calls of the removal enumerated: \(trace)")
        #expect(count >= 16, "only \(count) calls enumerated: \(trace)")
        #expect(entries(clean.autosaveDraftsFolder).visible.isEmpty)
        var saveFailures = 0
        var removalFailures = 0
        var harmless: [FaultInjector.Call] = []
        for k in 1...count {
            let folder = base.appending("run-\(k)")
            let (document, faults, draft) = try await prepare(in: folder)
            let file = document.fileURL
            let original = contents(file)
            faults.fail(call: k, with: .ioError)
            let context = "call \(k) of \(count), \(trace[k - 1]), failing with EIO"
            do {
                try await document.save()
                #expect(contents(file) == Data(Self.edited.utf8), "the saved file is not whole: \(context)")
                #expect(!document.hasUnsavedChanges, "\(context)")
                #expect(document.content == Self.edited, "\(context)")
                guard let error = document.lastSaveError else {
                    // A harmless failure (closing the released lock, say): the removal is done.
                    harmless.append(trace[k - 1])
                    #expect(k - 1 < removalStart || trace[k - 1].call == .close, "the removal's failure is not reported: \(context)")
                    #expect(entries(document.autosaveDraftsFolder).visible.isEmpty, "\(context)")
                    try await document.close()
                    continue
                }
                removalFailures += 1
                #expect(k - 1 >= removalStart, "the save failed after it returned: \(context)")
                #expect(error.path.hasPrefix(draft.deletingLastPathComponent().path), "\(context): \(error)")
                #expect(error.description.contains(error.path) && error.step != nil, "\(context): \(error)")
                #expect(error.errno == .ioError, "\(context): \(error)")
                #expect(document.autosavedContentsURL == nil, "a draft is still claimed: \(context)")
                // The document still owns what is left: discarding it again finishes the job.
                // (Only a failure to remove the emptied folder, its lock gone, shows it as damaged.)
                #expect(
                    trace[k - 1].call == .removeDirectory || RecoverableDraft.scan(document.autosaveDraftsFolder).damaged.isEmpty,
                    "\(context)")
                try document.discardRecoveryData()
            } catch {
                saveFailures += 1
                #expect(error.path == file.path || error.path.hasPrefix(folder.path), "\(context): \(error)")
                #expect(error.errno == .ioError, "\(context): \(error)")
                #expect(contents(file) == original, "the document's file changed: \(context)")
                #expect(document.hasUnsavedChanges && document.content == Self.edited, "\(context)")
                // The draft still holds the edits, and is the one claimed.
                try expectOneWholeDraft(of: document, holding: Self.edited, "\(context)")
                // An undone replacement (a failed directory fsync) renames the original back: its
                // change time moved, nothing else; the next save is no conflict (ItemState).
                do { try await document.save() } catch {
                    Issue.record("the next save failed: \(error): \(context)")
                    continue
                }
                #expect(document.lastSaveError == nil, "\(context)")
            }
            #expect(entries(document.autosaveDraftsFolder).visible.isEmpty, "\(entries(document.autosaveDraftsFolder)): \(context)")
            #expect(entries(document.autosaveDraftsFolder).hidden.isEmpty, "\(entries(document.autosaveDraftsFolder)): \(context)")
            try await document.close()
            try? FileManager.default.removeItem(at: folder)
        }
        #expect(removalFailures >= removalCalls.count - 1, "\(removalFailures) removal failures of \(removalCalls.count) calls")
        #expect(saveFailures > 0 && saveFailures + removalFailures + harmless.count == count, "harmless: \(harmless)")
        print("save and removal: \(count) calls, \(removalCalls.count) of the removal; \(saveFailures) failed the save, \(removalFailures) the removal, harmless: \(harmless)")
    }
}
