import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A save states the version it was based on: it never overwrites another writer's save silently.
@Suite struct ConflictingSaveTests {
    static func text(_ url: URL) throws -> String {
        try String(contentsOf: url.appendingPathComponent("text.txt"), encoding: .utf8)
    }

    /// Two documents of one package, both opened from the same base, with a version store.
    static func twoOpenDocuments(in folder: TemporaryDirectory, store: VersionStore?) async throws -> (URL, VersionedTextDocument, VersionedTextDocument) {
        let url = folder.appending("a.text")
        let original = VersionedTextDocument(fileURL: url, content: VersionedText(title: "A", text: "base"), readerVersion: 2)
        try await original.save()
        let first = VersionedTextDocument(fileURL: url, readerVersion: 2)
        let second = VersionedTextDocument(fileURL: url, readerVersion: 2)
        first.versionStore = store
        second.versionStore = store
        try await first.open()
        try await second.open()
        return (url, first, second)
    }

    @Test func aSaveOverAnotherWritersSaveKeepsItAsAnUnresolvedConflictVersion() async throws {
        let folder = try TemporaryDirectory()
        let store = VersionStore(libraryURL: folder.url)
        let (url, first, second) = try await Self.twoOpenDocuments(in: folder, store: store)
        try first.update { $0.text = "first" }
        try await first.save()
        #expect(first.lastConflictVersion == nil)
        try second.update { $0.text = "second" }

        try await second.save()

        #expect(try Self.text(url) == "second")
        let conflict = try #require(second.lastConflictVersion)
        #expect(conflict.isUnresolvedConflict && conflict.origin == .conflict)
        #expect(try Self.text(conflict.url) == "first")
        let listing = try store.versions(ofItemAt: url)
        #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == [conflict.persistentIdentifier])
        // The base both started from was kept by the first save, and is the conflict's ancestor.
        let ancestor = try #require(conflict.ancestorIdentifier.flatMap { try store.version(ofItemAt: url, withPersistentIdentifier: $0) })
        #expect(try Self.text(ancestor.url) == "base")
        #expect(listing.problems.isEmpty)
    }

    @Test func withoutAStoreTheSaveFailsAndKeepsBothTheFileAndTheEdits() async throws {
        let folder = try TemporaryDirectory()
        let (url, first, second) = try await Self.twoOpenDocuments(in: folder, store: nil)
        try first.update { $0.text = "first" }
        try await first.save()
        try second.update { $0.text = "second" }

        let error = await #expect(throws: DocumentKitError.self) { try await second.save() }

        #expect(error?.code == .changedSinceRead)
        #expect(error?.path == url.path)
        #expect(try Self.text(url) == "first")
        #expect(second.content.text == "second" && second.hasUnsavedChanges)
    }

    @Test func savesOneAfterTheOtherMakeNoConflictAndKeepEachReplacedVersion() async throws {
        let folder = try TemporaryDirectory()
        let store = VersionStore(libraryURL: folder.url, pruning: .keepAll)
        let (url, first, _) = try await Self.twoOpenDocuments(in: folder, store: store)
        for text in ["one", "two", "three"] {
            try first.update { $0.text = text }
            try await first.save()
            #expect(first.lastConflictVersion == nil)
        }
        let listing = try store.versions(ofItemAt: url)
        #expect(listing.unresolvedConflicts.isEmpty)
        #expect(Set(try listing.others.map { try Self.text($0.url) }) == ["base", "one", "two"])
        #expect(listing.others.allSatisfy { $0.origin == .save })
    }

    @Test func aChangeOfMetadataOnlyIsNotAConflict() async throws {
        let folder = try TemporaryDirectory()
        let store = VersionStore(libraryURL: folder.url)
        let (url, first, _) = try await Self.twoOpenDocuments(in: folder, store: store)
        // A sync engine's temporary file comes and goes inside the package: its folder changes.
        let temporary = url.appendingPathComponent(".syncthing.text.txt.tmp")
        try Data("x".utf8).write(to: temporary)
        try FileManager.default.removeItem(at: temporary)
        try first.update { $0.text = "mine" }

        try await first.save()

        #expect(first.lastConflictVersion == nil)
        #expect(try store.versions(ofItemAt: url).unresolvedConflicts.isEmpty)
    }
}

/// Resolving a conflict version: keep the current content, take the version's, or merge.
@Suite struct ConflictResolutionTests {
    /// A document whose second save met the first's: one unresolved conflict version ("first").
    static func documentWithConflict(in folder: TemporaryDirectory) async throws -> (VersionedTextDocument, FileVersion, VersionStore) {
        let store = VersionStore(libraryURL: folder.url)
        let (_, first, second) = try await ConflictingSaveTests.twoOpenDocuments(in: folder, store: store)
        try first.update { $0.text = "base\nfirst" }
        try await first.save()
        try second.update { $0.text = "base\nsecond" }
        try await second.save()
        return (second, try #require(second.lastConflictVersion), store)
    }

    @Test func keepingTheCurrentContentMarksTheVersionResolvedAndChangesNothing() async throws {
        let folder = try TemporaryDirectory()
        let (document, conflict, store) = try await Self.documentWithConflict(in: folder)
        try await document.resolveConflict(conflict, by: .keepCurrent)
        #expect(try document.unresolvedConflictVersions().isEmpty)
        #expect(try ConflictingSaveTests.text(document.fileURL) == "base\nsecond")
        let resolved = try #require(try store.version(ofItemAt: document.fileURL, withPersistentIdentifier: conflict.persistentIdentifier))
        #expect(resolved.isConflict && resolved.isResolved && resolved.resolution == .keptCurrent)
    }

    @Test func keepingTheConflictVersionSavesItsContentAndKeepsTheCurrentAsAVersion() async throws {
        let folder = try TemporaryDirectory()
        let (document, conflict, store) = try await Self.documentWithConflict(in: folder)
        try await document.resolveConflict(conflict, by: .keepConflictVersion)
        #expect(document.content.text == "base\nfirst")
        #expect(try ConflictingSaveTests.text(document.fileURL) == "base\nfirst")
        let others = try store.versions(ofItemAt: document.fileURL).others
        #expect(try others.contains { try ConflictingSaveTests.text($0.url) == "base\nsecond" && !$0.isConflict })
        #expect(others.first { $0.persistentIdentifier == conflict.persistentIdentifier }?.resolution == .keptThis)
    }

    @Test func mergingGivesTheSubclassTheCommonAncestorAndSavesTheResult() async throws {
        let folder = try TemporaryDirectory()
        let (document, conflict, _) = try await Self.documentWithConflict(in: folder)
        try await document.resolveConflict(conflict, by: .merge)
        // With the ancestor ("base") known, the merge adds only "first"; without it, it would say so.
        #expect(document.content.text == "base\nsecond\nfirst")
        #expect(try ConflictingSaveTests.text(document.fileURL) == "base\nsecond\nfirst")
        #expect(try document.unresolvedConflictVersions().isEmpty)
    }

    @Test func aDocumentThatDoesNotMergeSaysSoAndLeavesTheConflictUnresolved() async throws {
        final class PlainText: Document<String>, @unchecked Sendable {
            override func read(from fileWrapper: FileWrapper) throws -> String { String(decoding: try fileWrapper.regularFileContents, as: UTF8.self) }
            override func fileWrapper(for content: String, replacing previous: FileWrapper?) throws -> FileWrapper {
                FileWrapper(regularFileWithContents: Data(content.utf8))
            }
        }
        let folder = try TemporaryDirectory()
        let url = folder.appending("a.txt")
        try Data("base".utf8).write(to: url)
        let store = VersionStore(libraryURL: folder.url)
        let document = PlainText(fileURL: url)
        document.versionStore = store
        try await document.open()
        try Data("theirs".utf8).write(to: url)
        try document.update { $0 = "mine" }
        try await document.save()
        let conflict = try #require(document.lastConflictVersion)
        let error = await #expect(throws: DocumentKitError.self) { try await document.resolveConflict(conflict, by: .merge) }
        #expect(error?.detail?.contains("merge") == true)
        #expect(try document.unresolvedConflictVersions().count == 1)
        #expect(try String(contentsOf: url, encoding: .utf8) == "mine")
    }
}
