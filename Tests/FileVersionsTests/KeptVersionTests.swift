// Issue #12, section 4: kept versions must not change, and must always be kept.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Kept versions never change and are always kept", .timeLimit(.minutes(3)))
struct KeptVersionTests {
    /// Appends `text` to the file at `url` in place (as `>>` does), and overwrites its first
    /// byte in place (as `dd conv=notrunc`).
    static func writeInPlace(_ url: URL, appending text: String) throws {
        let fd = open(url.path, O_WRONLY)
        try #require(fd >= 0, "open \(url.path)")
        defer { close(fd) }
        _ = pwrite(fd, "X", 1, 0)
        _ = lseek(fd, 0, SEEK_END)
        _ = text.withCString { write(fd, $0, strlen($0)) }
    }

    @Test func writingInPlaceToAPackagesMembersNeverChangesAKeptVersion() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1", "photos/a.txt": "A"])
        let store = library.store()
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
        tree = try store.save(tree, to: item, keepingReplacedAs: .save).saved
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v3".utf8))
        let second = try #require(try store.save(tree, to: item, keepingReplacedAs: .save).kept)
        let kept = try store.versions(ofItemAt: item).others
        let before = try kept.map { try contents(of: $0.url) }
        #expect(kept.count == 2)

        try Self.writeInPlace(item.appendingPathComponent("photos/a.txt"), appending: "edited in place")
        try Self.writeInPlace(item.appendingPathComponent("body.md"), appending: "edited in place")

        #expect(try kept.map { try contents(of: $0.url) } == before)
        #expect(try texts(of: second.url) == ["body.md": "v2", "photos/a.txt": "A"])
        // No file of a version is a file of the document.
        for version in kept {
            for member in ["body.md", "photos/a.txt"] {
                #expect(try inode(version.url.appendingPathComponent(member).path) != inode(item.appendingPathComponent(member).path))
            }
        }
    }

    @Test func writingInPlaceToAFileNeverChangesAKeptVersion() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("todo.txt", "one\n")
        let store = library.store()
        let byAdding = try store.addVersion(ofItemAt: item)
        try Self.writeInPlace(item, appending: "two\n")
        let bySaving = try #require(try store.save(FileWrapper(regularFileWithContents: Data("three\n".utf8)), to: item, keepingReplacedAs: .save).kept)
        try Self.writeInPlace(item, appending: "four\n")
        #expect(try String(contentsOf: byAdding.url, encoding: .utf8) == "one\n")
        #expect(try String(contentsOf: bySaving.url, encoding: .utf8) == "Xne\ntwo\n")
    }

    @Test func aRestoredVersionSharesNoFileWithTheStore() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1", "a.txt": "A"])
        let store = library.store()
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
        let first = try #require(try store.save(tree, to: item, keepingReplacedAs: .save).kept)
        try store.replaceItem(at: item, with: first)
        #expect(try texts(of: item) == ["body.md": "v1", "a.txt": "A"])
        try Self.writeInPlace(item.appendingPathComponent("a.txt"), appending: "!")
        try Self.writeInPlace(item.appendingPathComponent("body.md"), appending: "!")
        for version in try store.versions(ofItemAt: item).others {
            #expect(try texts(of: version.url)["a.txt"] == "A")
        }
        #expect(try texts(of: first.url) == ["body.md": "v1", "a.txt": "A"])
    }

    @Test func versionsOfAPackageShareTheirUnchangedFilesWithEachOtherOnly() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("p.note", ["body.md": "v0", "big.bin": String(repeating: "x", count: 10_000)])
        let store = library.store()
        var tree = try FileWrapper(contentsOf: item)
        for index in 1...3 {
            tree["body.md"] = FileWrapper(regularFileWithContents: Data("v\(index)".utf8))
            tree = try store.save(tree, to: item, keepingReplacedAs: .save).saved
        }
        let versions = try store.versions(ofItemAt: item).others
        #expect(versions.count == 3)
        let inodes = try Set(versions.map { try inode($0.url.appendingPathComponent("big.bin").path) })
        #expect(inodes.count == 1)
        #expect(try !inodes.contains(inode(item.appendingPathComponent("big.bin").path)))
    }

    @Test func aSaveWhoseVersionRecordCantBeWrittenFailsAndLeavesTheItemAndTheStoreAsTheyWere() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1"])
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: faults.fileSystem)
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
        // Find the call that creates the record's temporary file, on a copy of the library.
        let rehearsal = try VersionLibrary()
        let rehearsalItem = try rehearsal.writePackage("trip.note", ["body.md": "v1"])
        let rehearsalFaults = FaultInjector()
        let rehearsalStore = VersionStore(libraryURL: rehearsal.url, pruning: .keepAll, durability: .consistent, fileSystem: rehearsalFaults.fileSystem)
        try rehearsalStore.save(tree, to: rehearsalItem, keepingReplacedAs: .save)
        let index = try #require(rehearsalFaults.trace.firstIndex { $0.call == .write && $0.name.contains("record.json") })
        let before = try contents(of: item)

        faults.fail(call: index + 1, with: .ioError)
        let error = #expect(throws: DocumentKitError.self) { try store.save(tree, to: item, keepingReplacedAs: .save) }
        #expect(error?.path == item.path)
        #expect(error?.originalIsIntact == true)
        #expect(error?.description.contains("record.json") == true, "\(error?.description ?? "")")
        #expect(try contents(of: item) == before)
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
        for folder in library.documentFolders() {
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(folder.path)")
        }
    }

    @Test func everyFailingCallOfAVersionedSaveLeavesTheDocumentAndEveryVersionWhole() throws {
        func makeLibrary() throws -> (VersionLibrary, URL, FileWrapper) {
            let library = try VersionLibrary()
            let item = try library.writePackage("trip.note", ["body.md": "v1", "a/b.txt": "B"])
            var tree = try FileWrapper(contentsOf: item)
            tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
            tree = try library.store().save(tree, to: item, keepingReplacedAs: .save).saved
            tree["body.md"] = FileWrapper(regularFileWithContents: Data("v3".utf8))
            return (library, item, tree)
        }
        try checkEveryFailingCallOfAVersionedSave(makeLibrary)
    }

    @Test func fortyDocumentsSavedAtOnceInOneLibraryKeepEveryVersion() async throws {
        let library = try VersionLibrary()
        let store = library.store()
        let saves = 5
        // Each document in a folder of its own, all in one library with one store.
        let items = try (0..<40).map { try library.writePackage("d\($0)/doc-\($0).note", ["body.md": "0"], documentIdentifier: "DOC-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in items {
                group.addTask {
                    for save in 1...saves {
                        let tree = try VersionLibrary.package(["body.md": "\(save)"], documentIdentifier: item.deletingPathExtension().lastPathComponent.uppercased())
                        let kept = try store.save(tree, to: item, keepingReplacedAs: .save).kept
                        #expect(kept != nil)
                    }
                }
            }
            try await group.waitForAll()
        }
        for item in items {
            let listing = try store.versions(ofItemAt: item)
            #expect(listing.problems.isEmpty)
            #expect(try Set(listing.others.map { try texts(of: $0.url)["body.md"] ?? "?" }) == Set((0..<saves).map(String.init)), "\(item.lastPathComponent)")
        }
    }

    @Test func aVersion1StoreIsMigratedItsVersionsStopSharingFilesWithTheDocuments() throws {
        let library = try VersionLibrary()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Formats/version-store/v1/fixtures/library")
        for name in try FileManager.default.contentsOfDirectory(atPath: fixture.path) {
            try FileManager.default.copyItem(at: fixture.appendingPathComponent(name), to: library.item(name))
        }
        let item = library.item("trip.note")
        let store = library.store()
        let versions = try store.versions(ofItemAt: item).others
        let stored = try #require(versions.first { (try? texts(of: $0.url)["body.md"]) == (try? texts(of: item)["body.md"]) } ?? versions.first)
        // As version 1 kept them: the version's member is the document's member.
        let member = stored.url.appendingPathComponent("body.md")
        try FileManager.default.removeItem(at: member)
        try FileManager.default.linkItem(at: item.appendingPathComponent("body.md"), to: member)
        let before = try contents(of: stored.url)

        var tree = try FileWrapper(contentsOf: item)
        tree["extra.md"] = FileWrapper(regularFileWithContents: Data("new".utf8))
        try store.save(tree, to: item, keepingReplacedAs: .save)

        let storeFile = library.storeURL.appendingPathComponent("store.json")
        #expect(try String(contentsOf: storeFile, encoding: .utf8).contains("\"version\" : 4"))
        #expect(try inode(member.path) != inode(item.appendingPathComponent("body.md").path))
        try Self.writeInPlace(item.appendingPathComponent("body.md"), appending: "in place")
        #expect(try contents(of: stored.url) == before)
        #expect(try store.versions(ofItemAt: item).problems.isEmpty)
    }
}
