import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

/// The frozen fixtures of `Formats/save-protocol/` are read by today's recovery.
@Suite struct SaveProtocolFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/save-protocol/v1/fixtures/.trip.note.dk-intent")

    @Test("the version 1 intent record parses")
    func intentParses() throws {
        let record = try #require(RenameIntent(data: try Data(contentsOf: Self.fixture), item: "trip.note"))
        #expect(record.newName == ".trip.note.dk-new-k7m2xq9rbw3p")
        #expect(record.oldName == ".trip.note.dk-old-a8c4hj2n5s6t")
        #expect(RenameIntent(data: try Data(contentsOf: Self.fixture), item: "other.note") == nil)
    }

    @Test("an interrupted fallback swap recorded by the version 1 fixture is rolled forward at the next read")
    func intentFixtureIsCompleted() throws {
        let directory = try TemporaryDirectory(prefix: "save-protocol")
        let staging = try TemporaryDirectory(prefix: "save-protocol-staging")
        let record = try #require(RenameIntent(data: try Data(contentsOf: Self.fixture), item: "trip.note"))
        // The trees are built elsewhere and renamed in, as a crashed fallback swap leaves them
        // (a save in the same folder would sweep an unlocked temporary tree first).
        for (name, text) in [(record.newName, "new"), (record.oldName, "old")] {
            let tree = FileWrapper(directoryWithFileWrappers: ["body.md": FileWrapper(regularFileWithContents: Data(text.utf8))])
            try tree.write(to: staging.appending(text))
            try FileManager.default.moveItem(at: staging.appending(text), to: directory.appending(name))
        }
        try FileManager.default.copyItem(at: Self.fixture, to: directory.appending(".trip.note.dk-intent"))
        let read = try FileWrapper(contentsOf: directory.appending("trip.note"))
        #expect(try read["body.md"]?.regularFileContents == Data("new".utf8))
        #expect(try directory.contents() == ["trip.note"])
    }
}
