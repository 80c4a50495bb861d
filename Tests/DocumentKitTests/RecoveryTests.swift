#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A text file document whose drafts go to `drafts` beside it.
final class RecoveryTextDocument: Document<String>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> String {
        String(decoding: try fileWrapper.regularFileContents, as: UTF8.self)
    }
    override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
        FileWrapper(regularFileWithContents: Data(content.utf8))
    }
    override var autosaveDraftsFolder: URL {
        ProcessInfo.processInfo.environment["DK_RECOVERY_DRAFTS"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? fileURL.deletingLastPathComponent().appendingPathComponent("drafts", isDirectory: true)
    }
}

/// The package of `dk-crash-child draft`: `state.txt` holds a number.
final class RecoveredStateDocument: Document<Int>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> Int {
        let text = String(decoding: try fileWrapper["state.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
        guard let k = Int(text) else { throw CocoaError(.fileReadCorruptFile) }
        return k
    }
    override func fileWrapper(for content: Int, replacing previous: FileWrapper?) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        tree["state.txt"] = FileWrapper(regularFileWithContents: Data("\(content)".utf8))
        return tree
    }
}

/// Crash recovery: drafts autosaved elsewhere, their lock, their lifecycle and format.
@Suite(.serialized) struct RecoveryTests {
    /// `Formats/drafts/v1` in the repository.
    static let formatFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/drafts/v1")

    let folder: TemporaryDirectory
    var drafts: URL { folder.appending("drafts") }

    init() throws { folder = try TemporaryDirectory(prefix: "dk-recovery") }

    /// Waits (on the policy's clock, for real) until the document autosaved elsewhere.
    private func autosaved(_ events: AsyncStream<DocumentEvent>) async {
        for await event in events {
            if case .saved(.autosaveElsewhere) = event { return }
        }
    }

    @Test func aDocumentThatDoesNotAutosaveInPlaceWritesADraftEntryAndItsSaveDeletesIt() async throws {
        let url = folder.appending("letter.txt")
        try Data("saved".utf8).write(to: url)
        let document = try await RecoveryTextDocument.open(at: url)
        document.autosavePolicy = AutosavePolicy(quietPeriod: .milliseconds(5), autosavesInPlace: false)
        let events = document.events()
        try document.update { $0 = "edited" }
        await autosaved(events)
        #expect(try String(contentsOf: url, encoding: .utf8) == "saved")  // the file is untouched
        let draft = try #require(document.autosavedContentsURL)
        let entry = draft.deletingLastPathComponent()
        #expect(draft.lastPathComponent == "draft.txt")
        #expect(try String(contentsOf: draft, encoding: .utf8) == "edited")
        #expect(FileManager.default.fileExists(atPath: entry.appendingPathComponent("owner.lock").path))
        let record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: entry.appendingPathComponent("draft.json"))) as? [String: Any])
        #expect(record["format"] as? Int == 1)
        #expect(record["document"] as? String == url.standardizedFileURL.path)
        #expect(record["documentType"] as? String == "RecoveryTextDocument")
        #expect(record["ownerPID"] as? Int == Int(getpid()))
        #expect(record["draft"] as? String == "draft.txt")
        #expect((record["date"] as? String)?.hasSuffix("Z") == true)
        // Its owner (this process) is alive: not recoverable.
        #expect(RecoveryTextDocument.recoverable(in: drafts).isEmpty)
        #expect(RecoverableDraft.scan(drafts).live == 1)
        // A second autosave replaces the draft in the same entry.
        try document.update { $0 = "edited twice" }
        await autosaved(events)
        #expect(document.autosavedContentsURL == draft)
        #expect(try String(contentsOf: draft, encoding: .utf8) == "edited twice")
        try await document.save()
        #expect(!FileManager.default.fileExists(atPath: entry.path))
        #expect(try String(contentsOf: url, encoding: .utf8) == "edited twice")
        try await document.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: drafts.path).isEmpty)
    }

    @Test func discardingRecoveryDataOrChangesDeletesTheDraftAndAnAbandonedDocumentLeavesIt() async throws {
        let url = folder.appending("a.txt")
        try Data("saved".utf8).write(to: url)
        for way in ["discardRecoveryData", "close(discardingChanges: true)", "dropped"] {
            let document = try await RecoveryTextDocument.open(at: url)
            document.autosavePolicy = AutosavePolicy(quietPeriod: .milliseconds(5), autosavesInPlace: false)
            let events = document.events()
            try document.update { $0 = way }
            await autosaved(events)
            let entry = try #require(document.autosavedContentsURL).deletingLastPathComponent()
            switch way {
            case "discardRecoveryData":
                try document.discardRecoveryData()
                #expect(document.hasUnsavedChanges)
                try await document.close(discardingChanges: true)
                #expect(!FileManager.default.fileExists(atPath: entry.path), "\(way)")
            case "close(discardingChanges: true)":
                try await document.close(discardingChanges: true)
                #expect(!FileManager.default.fileExists(atPath: entry.path), "\(way)")
            default:
                // Let go without closing, as a crash would: the draft stays, and is recoverable
                // once nothing holds its lock.
                document.autosavePolicy = nil
                _ = consume document
                var found: [RecoverableDraft] = []
                for _ in 0..<200 where found.isEmpty {
                    found = RecoveryTextDocument.recoverable(in: drafts)
                    if found.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(found.map(\.entryURL.lastPathComponent) == [entry.lastPathComponent], "\(way)")
                try found.first?.discard()
                #expect(!FileManager.default.fileExists(atPath: entry.path))
            }
        }
        #expect(try String(contentsOf: url, encoding: .utf8) == "saved")
    }

    @Test func aLiveOwnersDraftIsNotRecoverableAndAKilledOnesIsAndRestores() async throws {
        let child = try #require(CrashRun.childExecutable(), "dk-crash-child not found")
        let package = folder.appending("state.pkg")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try Data("1".utf8).write(to: package.appendingPathComponent("state.txt"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: child)
        process.arguments = [package.path, "draft", drafts.path, "42"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        var said = ""
        while !said.contains("autosaved") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            said += String(decoding: data, as: UTF8.self)
        }
        #expect(said == "autosaved\n")
        // Alive: its draft is not offered.
        let alive = RecoverableDraft.scan(drafts)
        #expect(alive.drafts.isEmpty && alive.damaged.isEmpty && alive.live == 1)
        kill(pid, SIGKILL)
        process.waitUntilExit()
        watchdog.cancel()
        #expect(process.terminationReason == .uncaughtSignal)
        let dead = RecoverableDraft.scan(drafts)
        #expect(dead.live == 0 && dead.damaged.isEmpty)
        let draft = try #require(dead.drafts.first)
        #expect(dead.drafts.count == 1)
        #expect(draft.ownerPID == pid)
        #expect(draft.documentURL.path == package.path)
        #expect(draft.documentTypeName == "DraftingDocument")
        #expect(abs(draft.date.timeIntervalSinceNow) < 120)
        #expect(try String(contentsOf: package.appendingPathComponent("state.txt"), encoding: .utf8) == "1")
        // Restoring: the document opens with the draft as unsaved changes; its save deletes the draft.
        let document = RecoveredStateDocument(fileURL: package)
        try await document.open(recovering: draft)
        #expect(document.content == 42)
        #expect(document.hasUnsavedChanges)
        #expect(RecoverableDraft.scan(drafts).live == 1)  // this process owns it now
        try await document.save()
        #expect(try String(contentsOf: package.appendingPathComponent("state.txt"), encoding: .utf8) == "42")
        #expect(!FileManager.default.fileExists(atPath: draft.entryURL.path))
        try await document.close()
        let after = RecoverableDraft.scan(drafts)
        #expect(after.drafts.isEmpty && after.live == 0)
    }

    @Test func damagedEntriesAreReportedAndSkipped() throws {
        let fm = FileManager.default
        for name in ["no-record", "bad-record", "no-draft"] {
            let entry = drafts.appendingPathComponent(name)
            try fm.createDirectory(at: entry, withIntermediateDirectories: true)
            try Data().write(to: entry.appendingPathComponent("owner.lock"))
        }
        try Data("{".utf8).write(to: drafts.appendingPathComponent("bad-record/draft.json"))
        try Data(#"{"format":1,"document":"/x/a.txt","documentType":"RecoveryTextDocument","date":"2026-01-02T03:04:05Z","ownerPID":1,"host":"h","draft":"draft.txt"}"#.utf8)
            .write(to: drafts.appendingPathComponent("no-draft/draft.json"))
        try fm.createDirectory(at: drafts.appendingPathComponent("no-lock"), withIntermediateDirectories: true)
        let scan = RecoverableDraft.scan(drafts)
        #expect(scan.drafts.isEmpty)
        #expect(scan.damaged.map(\.entryURL.lastPathComponent).sorted() == ["bad-record", "no-draft", "no-lock", "no-record"])
        #expect(RecoveryTextDocument.recoverable(in: drafts).isEmpty)
        for damaged in scan.damaged where damaged.entryURL.lastPathComponent != "no-lock" { try damaged.discard() }
        #expect(RecoverableDraft.scan(drafts).damaged.count == 1)
    }

    /// The frozen fixture of format 1 (`Formats/drafts/v1/fixtures/drafts`), written once by
    /// `DK_WRITE_DRAFTS_FIXTURE=1` (see below), still reads.
    @Test func theFormat1FixtureReads() async throws {
        let copy = folder.appending("fixture")
        try FileManager.default.copyItem(at: Self.formatFolder.appendingPathComponent("fixtures/drafts"), to: copy)
        let found = RecoveryTextDocument.recoverable(in: copy)
        let draft = try #require(found.first)
        #expect(found.count == 1)
        #expect(draft.documentURL.path == "/home/user/Documents/letter.txt")
        #expect(draft.documentTypeName == "RecoveryTextDocument")
        #expect(draft.draftURL.lastPathComponent == "draft.txt")
        #expect(draft.date < Date())
        let document = RecoveryTextDocument(fileURL: draft.documentURL)
        try await document.open(recovering: draft)
        #expect(document.content == "Dear Ann,\nthe draft of a letter never saved.\n")
        #expect(document.hasUnsavedChanges)
        try await document.close(discardingChanges: true)
        #expect(!FileManager.default.fileExists(atPath: draft.entryURL.path))
    }

    /// Writes the fixture (once; it is frozen): `DK_WRITE_DRAFTS_FIXTURE=1 swift test --filter writeFixture`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DK_WRITE_DRAFTS_FIXTURE"] == "1"))
    func writeFixture() async throws {
        let target = Self.formatFolder.appendingPathComponent("fixtures/drafts", isDirectory: true)
        setenv("DK_RECOVERY_DRAFTS", target.path, 1)
        defer { unsetenv("DK_RECOVERY_DRAFTS") }
        let document = RecoveryTextDocument(
            fileURL: URL(fileURLWithPath: "/home/user/Documents/letter.txt"), content: "Dear Ann,\nthe draft of a letter never saved.\n")
        document.autosavePolicy = AutosavePolicy(quietPeriod: .milliseconds(5))
        let events = document.events()
        await autosaved(events)
        document.autosavePolicy = nil
    }
}
