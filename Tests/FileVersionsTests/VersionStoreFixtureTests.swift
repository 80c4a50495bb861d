import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The frozen fixtures of `Formats/version-store/v1` to `v4`, read with today's code (see their READMEs).
@Suite struct VersionStoreFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/version-store/v1/fixtures")

    static func body(_ version: FileVersion) throws -> String {
        let url = version.url.hasDirectoryPath || version.url.pathExtension == "" && FileManager.default.fileExists(atPath: version.url.appendingPathComponent("body.md").path)
            ? version.url.appendingPathComponent("body.md") : version.url
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test(arguments: ["v1", "v2"]) func aStoreListsEveryVersionAsWritten(format: String) throws {
        let library = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("\(format)/fixtures/library")
        let store = VersionStore.forItem(at: library.appendingPathComponent("trip.note"))
        #expect(store.libraryURL.path == library.path)
        let listing = try store.versions(ofItemAt: library.appendingPathComponent("trip.note"))
        #expect(listing.problems.isEmpty)
        #expect(listing.others.map(\.persistentIdentifier) == [
            "20261122T061514Z-678fd040094e5329", "20261121T235000Z-6f63b8ce5db84a15",
            "20261121T232640Z-55d2a45e47a46579", "20261121T222640Z-190e4be827da43ee",
        ])
        #expect(listing.others.map(\.origin) == [.adoptedCopy, .conflict, .save, .save])
        #expect(listing.others.map(\.isConflict) == [true, true, false, false])
        #expect(listing.others.map(\.isResolved) == [false, true, true, true])
        #expect(listing.others[1].resolution == .keptCurrent)
        #expect(listing.others[0].adoptedFrom == "syncthing")
        #expect(try listing.others.map(Self.body) == [
            "Day one: Lisbon.\nDay two: Coimbra.\n", "Day one: Sintra.\n", "Day one: Lisbon.\nDay two: Porto.\n", "Day one: Lisbon.\n",
        ])
        #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == ["20261122T061514Z-678fd040094e5329"])

        let todo = try store.versions(ofItemAt: library.appendingPathComponent("todo.txt"))
        #expect(todo.others.map(\.persistentIdentifier) == ["20261122T011320Z-28b3e2baaf822711"])
        #expect(try String(contentsOf: todo.others[0].url, encoding: .utf8) == "milk\n")
    }

    @Test func aVersion3StoreListsEachVersionInItsLastState() throws {
        let library = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("v3/fixtures/library")
        let note = library.appendingPathComponent("trip.note")
        for _ in 0..<2 {  // the second listing from what the store remembers
            let listing = try VersionStore.forItem(at: note).versions(ofItemAt: note)
            #expect(listing.problems.isEmpty)
            #expect(listing.others.map(\.persistentIdentifier) == [
                "20261122T061514Z-678fd040094e5329", "20261121T235000Z-6f63b8ce5db84a15",
                "20261121T232640Z-55d2a45e47a46579", "20261121T222640Z-190e4be827da43ee",
            ])
            #expect(listing.others.map(\.origin) == [.adoptedCopy, .conflict, .save, .save])
            #expect(listing.others.map(\.isConflict) == [true, true, true, false])
            #expect(listing.others.map(\.isResolved) == [true, true, false, true])
            #expect(listing.others.map(\.resolution) == [.merged, .keptCurrent, nil, nil])
            #expect(listing.others[2].ancestorIdentifier == "20261121T222640Z-190e4be827da43ee")
            #expect(try listing.others.map(Self.body) == [
                "Day one: Lisbon.\nDay two: Coimbra.\n", "Day one: Sintra.\n", "Day one: Lisbon.\nDay two: Porto.\n", "Day one: Lisbon.\n",
            ])
            #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == ["20261121T232640Z-55d2a45e47a46579"])
            #expect(try VersionStore.forItem(at: note).unresolvedConflictCount(ofItemAt: note) == 1)
        }
        let todo = try VersionStore.forItem(at: note).versions(ofItemAt: library.appendingPathComponent("todo.txt"))
        #expect(todo.others.map(\.persistentIdentifier) == ["20261122T011320Z-28b3e2baaf822711"])
    }

    @Test func aVersion4StoreCompletesTheVersionASaveKilledAfterItsExchangeLeftAndRemovesTheOneKilledBefore() throws {
        let fixture = Self.fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("v4/fixtures/library")
        // A copy: completing an entry changes the store.
        let library = try TemporaryDirectory(prefix: "dk-v4-fixture")
        for name in try FileManager.default.contentsOfDirectory(atPath: fixture.path) {
            try FileManager.default.copyItem(at: fixture.appendingPathComponent(name), to: library.url.appendingPathComponent(name))
        }
        let note = library.url.appendingPathComponent("trip.note")
        let folder = library.url.appendingPathComponent(".documentkit-versions/documents/id-8C1E5F7A-2B3D-4E6F-9A0B-1C2D3E4F5A6B")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".swap-") }.count == 2)
        for _ in 0..<2 {
            let listing = try VersionStore.forItem(at: note).versions(ofItemAt: note)
            #expect(listing.problems.isEmpty)
            #expect(listing.others.map(\.persistentIdentifier) == [
                "20261128T001233Z-6f63b8ce5db84a15",
                "20261122T061514Z-678fd040094e5329", "20261121T235000Z-6f63b8ce5db84a15",
                "20261121T232640Z-55d2a45e47a46579", "20261121T222640Z-190e4be827da43ee",
            ])
            #expect(listing.others.map(\.origin) == [.save, .adoptedCopy, .conflict, .save, .save])
            #expect(listing.others.map(\.isResolved) == [true, true, true, false, true])
            #expect(try listing.others.map(Self.body) == [
                "Day one: Lisbon.\nDay two: Porto.\nDay three: Braga.\n",
                "Day one: Lisbon.\nDay two: Coimbra.\n", "Day one: Sintra.\n", "Day one: Lisbon.\nDay two: Porto.\n", "Day one: Lisbon.\n",
            ])
            #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == ["20261121T232640Z-55d2a45e47a46579"])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }.isEmpty)
        #expect(try String(contentsOf: note.appendingPathComponent("body.md"), encoding: .utf8)
            == "Day one: Lisbon.\nDay two: Porto.\nDay three: Braga.\nDay four: Guimarães.\n")
        let todo = try VersionStore.forItem(at: note).versions(ofItemAt: library.url.appendingPathComponent("todo.txt"))
        #expect(todo.others.map(\.persistentIdentifier) == ["20261122T011320Z-28b3e2baaf822711"])
    }

    @Test func aDamagedVersion1StoreReportsEachDamageAndListsTheRest() throws {
        let library = Self.fixtures.appendingPathComponent("damaged")
        let note = library.appendingPathComponent("trip.note")
        let before = try Data(contentsOf: note.appendingPathComponent("body.md"))
        let store = VersionStore(libraryURL: library)
        let listing = try store.versions(ofItemAt: note)
        #expect(listing.others.map(\.persistentIdentifier) == ["20261122T061514Z-678fd040094e5329"])
        let paths = listing.problems.map(\.path).sorted()
        let folder = library.path + "/.documentkit-versions/documents/id-8C1E5F7A-2B3D-4E6F-9A0B-1C2D3E4F5A6B/"
        #expect(paths == [
            folder + "20261121T222640Z-190e4be827da43ee/record.json",
            folder + "20261121T232640Z-55d2a45e47a46579/record.json",
            folder + "20261121T235000Z-6f63b8ce5db84a15/item",
            folder + "notes-from-bob",
        ])
        #expect(try Data(contentsOf: note.appendingPathComponent("body.md")) == before)
        #expect(try store.versions(ofItemAt: library.appendingPathComponent("todo.txt")).others.count == 1)
    }
}
