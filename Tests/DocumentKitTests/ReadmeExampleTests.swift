import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

// The README's example, compiled and run, so that the README cannot drift from the API.

private struct Note: Sendable {
    var title: String
    var body: String
}

private final class NoteDocument: Document<Note>, @unchecked Sendable {
    override func read(from tree: FileWrapper) throws -> Note {
        let body = try tree["body.md"]?.regularFileContents ?? Data()
        let title = String(decoding: try tree["title.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
        return Note(title: title, body: String(decoding: body, as: UTF8.self))
    }

    override func fileWrapper(for note: Note, replacing previous: FileWrapper?) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])  // keeps members we don't know
        tree["title.txt"] = FileWrapper(regularFileWithContents: Data(note.title.utf8))
        tree["body.md"] = FileWrapper(regularFileWithContents: Data(note.body.utf8))
        return tree
    }
}

@Suite struct ReadmeExampleTests {
    @Test("the README's NoteDocument opens, edits and saves, keeping members it does not know")
    func readmeExample() async throws {
        let directory = try TemporaryDirectory(prefix: "readme")
        let url = directory.appending("Trip.note")
        try await NoteDocument(fileURL: url, content: Note(title: "Trip", body: "Pack light.")).save()
        try Data("from a newer version".utf8).write(to: url.appendingPathComponent("extra.bin"))

        let document = try await NoteDocument.open(at: url)
        try document.update { $0.body += "\nBook the tram." }
        try await document.save()

        let reopened = try await NoteDocument.open(at: url)
        #expect(reopened.content.title == "Trip")
        #expect(reopened.content.body == "Pack light.\nBook the tram.")
        #expect(try Data(contentsOf: url.appendingPathComponent("extra.bin")) == Data("from a newer version".utf8))
    }

    @Test("the README's second example: a coordinated document with a version store, and its events")
    func readmeVersionsExample() async throws {
        let directory = try TemporaryDirectory(prefix: "readme")
        let url = directory.appending("Trip.note")
        try await NoteDocument(fileURL: url, content: Note(title: "Trip", body: "Pack light.")).save()

        let coordinator = FileCoordinator(namespace: try .default(packageExtensions: ["note"]))
        let document = NoteDocument(fileURL: url, coordinator: coordinator)
        document.versionStore = VersionStore(libraryURL: url.deletingLastPathComponent(), coordinator: coordinator)
        let events = document.events()
        try await document.open()
        try document.update { $0.body += "\nBook the tram." }
        try await document.save()
        try await document.close()
        var seen: [String] = []
        for await event in events {
            if case .saved(let operation) = event { seen.append("saved \(operation.rawValue)") }
            if case .opened = event { seen.append("opened") }
        }
        #expect(seen == ["opened", "saved save"])
        let kept = try #require(try document.versionStore?.otherVersions(ofItemAt: url).first)
        #expect(try String(contentsOf: kept.url.appendingPathComponent("body.md"), encoding: .utf8) == "Pack light.")
    }
}
