import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import notes

/// The server's saved notes (``SavedNoteCache``): a `PUT` after a `PUT` of a note changes the
/// document the first one saved, unless anything changed the note's package meanwhile; then the
/// note is read again, and nothing another writer put there is lost.
@Suite("notes serve: a note the server saved is written again without reading it, unless it changed")
struct SavedNoteCacheTests {
    /// A library with one note, and the API over it as `notes serve` makes it.
    struct Setup {
        let folder: TemporaryDirectory
        let api: NotesAPI
        let id: String
        let url: URL

        init() async throws {
            folder = try TemporaryDirectory(prefix: "notes-saved-cache")
            let namespace = folder.appending("coordination")
            try FileManager.default.createDirectory(at: namespace, withIntermediateDirectories: false)
            let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespace, packageExtensions: ["note"]))
            let library = NotesLibrary(url: folder.appending("Library"), coordinator: coordinator, persistentIndex: false)
                .flushing(.durable, versionCompletion: .afterSaveReturns)
            try library.create()
            let note = Note(title: "Trip", body: "start\n")
            url = try await library.create(note)
            id = note.documentIdentifier.uuidString
            api = NotesAPI(library: library, events: EventHub(), limits: ServerLimits())
        }

        /// `PUT` of `body`, whatever the note's tag.
        @discardableResult
        func put(_ body: String) async throws -> NoteResource {
            try await api.update(id, condition: .any, with: NoteChangeRequest(body: body, tags: nil)).0
        }

        /// The note as a new reader finds it on disk.
        func onDisk() async throws -> Note {
            let document = try await api.library.open(url)
            defer { Task { try? await document.close() } }
            return document.content
        }
    }

    @Test func aNoteWrittenAgainUntouchedIsNotReadAgainAndHoldsTheLastWrite() async throws {
        let setup = try await Setup()
        try await setup.put("one\n")
        #expect(setup.api.savedNotes.count == 1)
        #expect(setup.api.savedNotes.reusedCount == 0)
        let second = try await setup.put("two\n")
        try await setup.put("three\n")
        #expect(setup.api.savedNotes.reusedCount == 2)
        #expect(second.body == "two\n")
        #expect(try await setup.onDisk().body == "three\n")
        // Each write kept the state it replaced, as a write that read the note does.
        let versions = try setup.api.library.store.versions(ofItemAt: setup.url).others
        #expect(versions.count >= 3, "versions kept: \(versions.count)")
    }

    @Test func anAttachmentAnotherWriterAddedBetweenTwoWritesIsKept() async throws {
        let setup = try await Setup()
        try await setup.put("one\n")
        // Another writer (here the API's attachment route, which reads the note itself) adds a member.
        let upload = setup.folder.appending("photo.bin")
        try Data([1, 2, 3, 4]).write(to: upload)
        _ = try await setup.api.putAttachment("photo.bin", of: setup.id, condition: .any, from: upload)
        let after = try await setup.put("two\n")
        #expect(setup.api.savedNotes.reusedCount == 0, "the note changed: it must be read again")
        #expect(after.attachments.map(\.name) == ["photo.bin"])
        let note = try await setup.onDisk()
        #expect(note.body == "two\n")
        #expect(try note.attachments["photo.bin"]?.regularFileContents == Data([1, 2, 3, 4]))
    }

    @Test func aConflictThatReachedTheStoreAloneMakesTheNextWriteReadTheNoteAndCountIt() async throws {
        let setup = try await Setup()
        try await setup.put("one\n")
        // A conflict version added without changing the note's package (as an adopted sibling copy is).
        try setup.api.library.store.addVersion(ofItemAt: setup.url, isConflict: true)
        let after = try await setup.put("two\n")
        #expect(setup.api.savedNotes.reusedCount == 0, "the kept document doesn't know of the conflict")
        #expect(after.conflicts == 1)
        // In conflict, it is not kept either.
        try await setup.put("three\n")
        #expect(setup.api.savedNotes.reusedCount == 0)
        #expect(try await setup.onDisk().body == "three\n")
    }

    @Test func aMemberWrittenInPlaceOrTheNoteMovedAwayAndBackMakesTheNextWriteReadIt() async throws {
        let setup = try await Setup()
        try await setup.put("one\n")
        // An editor writing a member in place (the same bytes: only its identity tells).
        let member = try #require(
            try FileManager.default.contentsOfDirectory(atPath: setup.url.path).first { $0 != NoteFormat.manifestName })
        let memberURL = setup.url.appendingPathComponent(member)
        let bytes = try Data(contentsOf: memberURL)
        try await Task.sleep(for: .milliseconds(20))
        let handle = try FileHandle(forWritingTo: memberURL)
        try handle.write(contentsOf: bytes)
        try handle.close()
        try await setup.put("two\n")
        #expect(setup.api.savedNotes.reusedCount == 0)
        // `mv` away and back: the same folder, but not untouched.
        let away = setup.folder.appending("Library/away.note")
        try FileManager.default.moveItem(at: setup.url, to: away)
        try FileManager.default.moveItem(at: away, to: setup.url)
        try await setup.put("three\n")
        #expect(setup.api.savedNotes.reusedCount == 0)
        try await setup.put("four\n")
        #expect(setup.api.savedNotes.reusedCount == 1)
        #expect(try await setup.onDisk().body == "four\n")
    }

    @Test func keptDocumentsAreBoundedInNumberAndInWritesEachServes() async throws {
        let setup = try await Setup()
        let document = try await setup.api.library.open(setup.url)
        let cache = SavedNoteCache(capacity: 1, reuseLimit: 2)
        cache.keep(document, uses: 0, at: setup.url)
        let taken = try #require(cache.take(at: setup.url))
        #expect(taken.uses == 1)
        #expect(cache.take(at: setup.url) == nil, "taken out while a write uses it")
        cache.keep(taken.document, uses: taken.uses, at: setup.url)
        let again = try #require(cache.take(at: setup.url))
        cache.keep(again.document, uses: again.uses, at: setup.url)
        #expect(cache.count == 0, "a document that served its limit of writes is not kept")
        // One at most: the oldest goes.
        let other = try await setup.api.library.create(Note(title: "Other", body: ""))
        cache.keep(document, uses: 0, at: setup.url)
        cache.keep(try await setup.api.library.open(other), uses: 0, at: other)
        #expect(cache.count == 1)
        #expect(cache.take(at: setup.url) == nil)
        #expect(cache.take(at: other) != nil)
        // A document with unsaved changes is not kept (nor does it push the one kept out).
        let third = try await setup.api.library.open(other)
        cache.keep(third, uses: 0, at: other)
        #expect(cache.count == 1)
        try document.update { $0.body = "unsaved" }
        cache.keep(document, uses: 0, at: setup.url)
        #expect(cache.count == 1)
        #expect(cache.take(at: setup.url) == nil)
        #expect(cache.take(at: other) != nil)
    }
}
