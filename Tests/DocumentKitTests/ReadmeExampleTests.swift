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
}
