import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A package edited by another program without its manifest (issue #13 §3): settled or still
/// being delivered, accepted by `acceptMembersOnDisk()`, with the newest whole version named;
/// and copies that get an identity of their own.
@Suite struct AcceptingMembersTests {
    let folder: TemporaryDirectory
    let store: VersionStore
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        store = VersionStore(libraryURL: folder.url, pruning: .keepAll)
        url = folder.appending("a.text")
    }

    /// A document of `url` (or `at`) with the store, not open; edits settle at once unless `settlePeriod` says otherwise.
    private func document(at place: URL? = nil, settlePeriod: Duration = .zero) -> VersionedTextDocument {
        let document = VersionedTextDocument(fileURL: place ?? url)
        document.versionStore = store
        document.packageSettlePeriod = settlePeriod
        return document
    }

    /// Saves "one", then "two" (so the store keeps "one", a whole version).
    private func saveTwoStates() async throws {
        let document = VersionedTextDocument(fileURL: url, content: VersionedText(title: "A", text: "one"), readerVersion: 2)
        document.versionStore = store
        try await document.save()
        try document.update { $0.text = "two" }
        try await document.save()
        try await document.close()
    }

    private func appendToText(_ text: String, in package: URL? = nil) throws {
        let handle = try FileHandle(forWritingTo: (package ?? url).appendingPathComponent("text.txt"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    private func text(_ package: URL) throws -> String {
        String(decoding: try Data(contentsOf: package.appendingPathComponent("text.txt")), as: UTF8.self)
    }

    @Test("a settled edit is refused as modifiedPackage naming the newest whole version; accepting it keeps the package as found")
    func settledEditIsAccepted() async throws {
        try await saveTwoStates()
        try appendToText(" and three")
        let manifestBefore = try Data(contentsOf: url.appendingPathComponent("Info.json"))

        let error = try await #require(throws: DocumentKitError.self) { try await document().open() }
        #expect(error.code == .modifiedPackage)
        #expect(error.description.contains("“text.txt”") && !error.description.contains("still be delivering"))
        let lastComplete = try #require(error.lastCompleteVersionPath)
        #expect(try text(URL(fileURLWithPath: lastComplete)) == "one")
        #expect(error.description.contains(lastComplete))

        let repairing = document()
        let acceptance = try await repairing.acceptMembersOnDisk()
        #expect(acceptance.verification.mismatchedMembers == ["text.txt"])
        let kept = try #require(acceptance.keptVersion)
        #expect(kept.origin == .save)
        #expect(try text(kept.url) == "two and three")
        #expect(try Data(contentsOf: kept.url.appendingPathComponent("Info.json")) == manifestBefore)
        try await repairing.open()
        #expect(repairing.content.text == "two and three")
        #expect(repairing.formatStatus?.verification.isComplete == true)
        // Nothing more to accept.
        let again = try await document().acceptMembersOnDisk()
        #expect(again.verification.isComplete && again.keptVersion == nil)
    }

    @Test("a package still changing is refused as incompletePackage; accepting it is refused and writes nothing")
    func changingPackageIsNotAccepted() async throws {
        try await saveTwoStates()
        try appendToText(" and three")
        let before = try Data(contentsOf: url.appendingPathComponent("Info.json"))
        let error = try await #require(throws: DocumentKitError.self) { try await document(settlePeriod: .seconds(3600)).open() }
        #expect(error.code == .incompletePackage)
        #expect(error.description.contains("still be delivering"))
        #expect(error.lastCompleteVersionPath != nil)
        let refusal = try await #require(throws: DocumentKitError.self) {
            try await document(settlePeriod: .seconds(3600)).acceptMembersOnDisk()
        }
        #expect(refusal.code == .incompletePackage)
        #expect(try Data(contentsOf: url.appendingPathComponent("Info.json")) == before)
        #expect(try store.otherVersions(ofItemAt: url).count == 1)
    }

    @Test("members that can't be read as the document are not accepted")
    func unreadableMembersAreNotAccepted() async throws {
        try await saveTwoStates()
        try FileManager.default.removeItem(at: url.appendingPathComponent("text.txt"))
        let error = try await #require(throws: DocumentKitError.self) { try await document().acceptMembersOnDisk() }
        #expect(error.code == .corruptData)
        #expect(try store.otherVersions(ofItemAt: url).count == 1)
        #expect(FileManager.default.fileExists(atPath: url.appendingPathComponent("Info.json").path))
    }

    @Test("without a store, accepting keeps a sync engine's conflict copy in the package, unrecorded")
    func conflictCopyIsKeptWithoutAStore() async throws {
        try await saveTwoStates()
        let copy = url.appendingPathComponent("text.sync-conflict-20261122-061514-OX5HCJ3.txt")
        try Data("their edit".utf8).write(to: copy)
        try appendToText(" and three")
        let document = VersionedTextDocument(fileURL: url)
        document.packageSettlePeriod = .zero
        let acceptance = try await document.acceptMembersOnDisk()
        #expect(acceptance.verification.mismatchedMembers == ["text.txt"] && acceptance.keptVersion == nil)
        #expect(try Data(contentsOf: copy) == Data("their edit".utf8))
        let manifest = try DocumentManifest(jsonData: Data(contentsOf: url.appendingPathComponent("Info.json")), path: url.path)
        #expect(manifest.members.map { Set($0.keys) } == ["text.txt"])
        try await document.open()
        #expect(document.content.text == "two and three")
    }

    @Test("a copy saved with saveTo has an identifier of its own")
    func saveToWritesAFreshIdentifier() async throws {
        try await saveTwoStates()
        let document = document()
        try await document.open()
        let copy = folder.appending("copy.text")
        try await document.save(to: copy, for: .saveTo)
        let original = try #require(document.manifest?.documentIdentifier)
        let copied = try DocumentManifest(jsonData: Data(contentsOf: copy.appendingPathComponent("Info.json")), path: copy.path)
        #expect(copied.documentIdentifier != original)
        #expect(document.manifest?.documentIdentifier == original)
    }

    @Test("a cp -a copy's first save gives it an identifier and a history of its own; the original's history is untouched")
    func copiedPackageGetsItsOwnIdentity() async throws {
        try await saveTwoStates()
        let copy = folder.appending("copy.text")
        try FileManager.default.copyItem(at: url, to: copy)
        let originalVersions = try store.otherVersions(ofItemAt: url).map(\.persistentIdentifier)
        let identifier = try DocumentManifest(jsonData: Data(contentsOf: url.appendingPathComponent("Info.json")), path: url.path).documentIdentifier

        let copied = document(at: copy)
        try await copied.open()
        try copied.update { $0.text = "copy" }
        try await copied.save()
        try copied.update { $0.text = "copy again" }
        try await copied.save()

        let copyManifest = try DocumentManifest(jsonData: Data(contentsOf: copy.appendingPathComponent("Info.json")), path: copy.path)
        #expect(copyManifest.documentIdentifier != identifier)
        #expect(copied.manifest?.documentIdentifier == copyManifest.documentIdentifier)
        #expect(try store.otherVersions(ofItemAt: url).map(\.persistentIdentifier) == originalVersions)
        let copyVersions = try store.otherVersions(ofItemAt: copy)
        #expect(try copyVersions.map { try text($0.url) }.sorted() == ["copy", "two"])
        // The original is as it was, and still opens.
        let original = document()
        try await original.open()
        #expect(original.content.text == "two" && original.manifest?.documentIdentifier == identifier)
    }
}

extension AcceptingMembersTests {
    private func identifier(at package: URL) throws -> String {
        try DocumentManifest(jsonData: Data(contentsOf: package.appendingPathComponent("Info.json")), path: package.path).documentIdentifier
    }

    @Test("after a shell's mv of the original and a cp -r copy put at its old name, the copy's save takes an identifier and the original's keeps it")
    func originalMovedAndCopyAtItsNameAreToldApart() async throws {
        try await saveTwoStates()  // saved by this process: it knows which file it saved
        let identifier = try identifier(at: url)
        let moved = folder.appending("moved.text")
        try FileManager.default.moveItem(at: url, to: moved)
        try FileManager.default.copyItem(at: moved, to: url)  // the copy, at the original's name and in its history's place

        let copied = document()
        try await copied.open()
        try copied.update { $0.text = "written into the copy" }
        try await copied.save()
        #expect(try self.identifier(at: url) != identifier, "the copy took an identifier of its own")
        #expect(copied.manifest?.documentIdentifier != identifier)

        let original = document(at: moved)
        try await original.open()
        try original.update { $0.text = "written into the original" }
        try await original.save()
        #expect(try self.identifier(at: moved) == identifier, "the moved original keeps its identifier")
        #expect(try text(moved) == "written into the original")
    }

    @Test("a save whose file was replaced by another document (mv onto its name) fails, leaves that document alone and keeps the edits")
    func anotherDocumentMovedOntoItsNameIsNotReplaced() async throws {
        try await saveTwoStates()
        let opened = document()
        try await opened.open()
        try opened.update { $0.text = "edited" }
        // Another document of the same kind is moved onto its name.
        let other = folder.appending("other.text")
        let otherDocument = VersionedTextDocument(fileURL: other, content: VersionedText(title: "B", text: "theirs"), readerVersion: 2)
        try await otherDocument.save()
        try await otherDocument.close()
        let otherIdentifier = try identifier(at: other)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: other, to: url)
        let versionsBefore = try store.otherVersions(ofItemAt: url).count

        do {
            try await opened.save()
            Issue.record("the save replaced another document")
        } catch {
            #expect(error.code == .changedSinceRead && error.originalIsIntact == true, "\(error)")
            #expect(error.description.contains(otherIdentifier), "\(error)")
        }
        #expect(try identifier(at: url) == otherIdentifier && (try text(url)) == "theirs")
        #expect(try store.otherVersions(ofItemAt: url).count == versionsBefore, "nothing was kept as a conflict of it")
        #expect(opened.hasUnsavedChanges && opened.content.text == "edited")
    }
}

/// `Document.identityLookup`: a copy found without reading every sibling.
@Suite struct IdentityLookupTests {
    /// A lookup that names what it was told, and counts its questions.
    final class FixedLookup: DocumentIdentityLookup, @unchecked Sendable {
        let answer: [URL]?
        private let lock = NSLock()
        private var asked: [String] = []
        init(_ answer: [URL]?) { self.answer = answer }
        func items(holding identifier: String, in folder: URL) -> [URL]? {
            lock.withLock { asked.append(identifier) }
            return answer
        }
        var questions: [String] { lock.withLock { asked } }
    }

    @Test("with a lookup, a cp -a copy's first save (no history yet) gets its own identifier without reading the siblings",
          arguments: [true, false])
    func copyFoundThroughLookup(lookupKnows: Bool) async throws {
        let folder = try TemporaryDirectory()
        let store = VersionStore(libraryURL: folder.url, pruning: .keepAll)
        let url = folder.appending("a.text")
        let original = VersionedTextDocument(fileURL: url, content: VersionedText(title: "A", text: "one"), readerVersion: 2)
        original.versionStore = store
        try await original.save()
        try await original.close()
        // As if another process had saved it last: this process doesn't know the file there.
        let rewritten = folder.appending("rewritten.text")
        try FileManager.default.copyItem(at: url, to: rewritten)
        try FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: rewritten, to: url)
        let identifier = try DocumentManifest(jsonData: Data(contentsOf: url.appendingPathComponent("Info.json")), path: url.path).documentIdentifier
        // Siblings a lookup makes needless to read: their manifests are not even valid.
        for number in 0..<20 {
            let sibling = folder.appending("0-other-\(number).text")  // sorted before a.text
            try FileManager.default.createDirectory(at: sibling, withIntermediateDirectories: true)
            try Data("not a manifest".utf8).write(to: sibling.appendingPathComponent("Info.json"))
        }
        try await Task.sleep(for: .milliseconds(20))  // the copy's folder changes after the original's
        let copy = folder.appending("copy.text")
        try FileManager.default.copyItem(at: url, to: copy)

        let faults = FaultInjector()
        let lookup = FixedLookup(lookupKnows ? [url, copy] : nil)
        let copied = VersionedTextDocument(fileURL: copy, saveOptions: SaveOptions(fileSystem: faults.fileSystem))
        copied.versionStore = store
        copied.identityLookup = lookup
        try await copied.open()
        try copied.update { $0.text = "copy" }
        try await copied.save()
        try await copied.close()

        let copyManifest = try DocumentManifest(jsonData: Data(contentsOf: copy.appendingPathComponent("Info.json")), path: copy.path)
        #expect(copyManifest.documentIdentifier != identifier)
        #expect(lookup.questions == [identifier])
        let readSiblings = faults.trace.filter { $0.call == .open && $0.name.contains("/0-other-") && $0.name.hasSuffix("Info.json") }.count
        // Without an answer every sibling's manifest is read, as without a lookup.
        #expect(readSiblings == (lookupKnows ? 0 : 20))
    }
}
