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
