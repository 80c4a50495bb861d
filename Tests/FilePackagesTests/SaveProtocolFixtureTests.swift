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

    static let bornFixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/save-protocol/v2/fixtures/.trip.note.dk-born-r4t8wq2mzk9d")

    @Test("the version 2 intent record is version 1's, and parses")
    func version2IntentParses() throws {
        let v2 = Self.fixture.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("v2/fixtures/.trip.note.dk-intent")
        #expect(try Data(contentsOf: v2) == Data(contentsOf: Self.fixture))
        #expect(RenameIntent(data: try Data(contentsOf: v2), item: "trip.note") != nil)
    }

    @Test("a young item that is being created is left alone by a sweep, an old one is removed, a locked one is busy")
    func bornItemsAreSweptOnlyWhenOld() throws {
        let directory = try TemporaryDirectory(prefix: "save-protocol-born")
        let name = Self.bornFixture.lastPathComponent
        try FileManager.default.copyItem(at: Self.bornFixture, to: directory.appending(name))
        #expect(InterruptedSaveRecovery.isTemporaryName(name))
        let folder = open(directory.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        // Young (just copied): not removed, not even locked for a moment.
        let young = try InterruptedSaveRecovery(fileSystem: .live).run(in: folder, path: directory.url.path)
        #expect(young.busy == [name])
        #expect(young.removed.isEmpty)
        #expect(try directory.contents() == [name])
        // Held by a live owner and old enough: busy.
        let owner = open(directory.appending(name).path, O_RDONLY | O_DIRECTORY)
        #expect(flock(owner, LOCK_EX | LOCK_NB) == 0)
        let held = try InterruptedSaveRecovery(fileSystem: .live, bornItemGracePeriod: 0).run(in: folder, path: directory.url.path)
        #expect(held.busy == [name])
        close(owner)
        // Old and unlocked: litter.
        let old = try InterruptedSaveRecovery(fileSystem: .live, bornItemGracePeriod: 0).run(in: folder, path: directory.url.path)
        #expect(old.removed == [name])
        #expect(try directory.contents().isEmpty)
    }

    @Test("a save's temporary items are never seen unlocked under their purpose's name")
    func temporaryItemsAreLockedWhenNamed() throws {
        let directory = try TemporaryDirectory(prefix: "save-protocol-locked")
        let folder = open(directory.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        let tree = try TemporaryItem.makeLockedDirectory(for: "trip.note", purpose: "new", in: folder, mode: 0o755, using: .live)
        let file = try TemporaryItem.makeLockedFile(for: "trip.txt", purpose: "tmp", in: folder, mode: 0o644, using: .live)
        defer { close(tree.descriptor); close(file.descriptor) }
        #expect(tree.name.hasPrefix(".trip.note.dk-new-") && file.name.hasPrefix(".trip.txt.dk-tmp-"))
        #expect(try directory.contents() == [tree.name, file.name].sorted())
        let report = try InterruptedSaveRecovery(fileSystem: .live, bornItemGracePeriod: 0).run(in: folder, path: directory.url.path)
        #expect(Set(report.busy) == [tree.name, file.name])
        #expect(report.removed.isEmpty)
    }
}
