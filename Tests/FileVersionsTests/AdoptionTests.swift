import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Conflict copies that sync engines leave become unresolved conflict versions.
@Suite struct AdoptionTests {
    /// A package with a manifest (so it has a document identifier) and a body.
    static func makePackage(at url: URL, body: String, identifier: String = "3F2504E0-4F89-11D3-9A0C-0305E82C3301") throws {
        let format = FormatDescription(identifier: "org.example.test", version: 1)
        let manifest = format.makeManifest(writer: .init(name: "test", version: "1"), documentIdentifier: identifier)
        try FileWrapper(directoryWithFileWrappers: [
            "Info.json": FileWrapper(regularFileWithContents: try manifest.jsonData()),
            "body.md": FileWrapper(regularFileWithContents: Data(body.utf8)),
        ]).write(to: url)
    }

    static func read(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

    @Test func copiesOfMembersInsideAPackageBecomeOneConflictVersionOfTheWholePackage() throws {
        let library = try TemporaryDirectory()
        let package = library.appending("trip.note")
        try Self.makePackage(at: package, body: "edit from b")
        // As Syncthing 1.19 leaves them: one copy per member, seconds apart, each with the winner's id.
        try Data("edit from a".utf8).write(to: package.appendingPathComponent("body.sync-conflict-20261122-061514-OX5HCJ3.md"))
        try Data("{\"not\": \"read\"}".utf8).write(to: package.appendingPathComponent("Info.sync-conflict-20261122-061516-MYTS6AX.json"))
        try Data("half".utf8).write(to: package.appendingPathComponent(".syncthing.body.md.tmp"))
        let store = VersionStore(libraryURL: library.url)
        #expect(store.pendingConflictCopies(in: library.url).count == 2)

        let adopted = try store.adoptConflictCopies(in: library.url)

        let version = try #require(adopted.first)
        #expect(adopted.count == 1)
        #expect(version.isConflict && !version.isResolved && version.origin == .adoptedCopy)
        #expect(version.adoptedFrom == "syncthing")
        #expect(version.localizedNameOfSavingComputer == nil)  // Syncthing names the winner, not the author
        #expect(try Self.read(version.url.appendingPathComponent("body.md")) == "edit from a")
        #expect(try Self.read(version.url.appendingPathComponent("Info.json")) == "{\"not\": \"read\"}")
        #expect(try FileManager.default.contentsOfDirectory(atPath: version.url.path).sorted() == ["Info.json", "body.md"])
        // The copies left the package; the current package is as it was.
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.path).sorted() == [".syncthing.body.md.tmp", "Info.json", "body.md"])
        #expect(try Self.read(package.appendingPathComponent("body.md")) == "edit from b")
        #expect(try store.unresolvedConflictVersions(ofItemAt: package).map(\.persistentIdentifier) == [version.persistentIdentifier])
        #expect(store.pendingConflictCopies(in: library.url).isEmpty)
    }

    @Test func adoptionLooksThroughTheFileSystemSeamAndAFailedListingNamesTheFolder() throws {
        let library = try TemporaryDirectory()
        let package = library.appending("trip.note")
        try Self.makePackage(at: package, body: "winner")
        try Data("loser".utf8).write(to: package.appendingPathComponent("body.sync-conflict-20261122-061514-OX5HCJ3.md"))
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, fileSystem: faults.fileSystem)
        #expect(store.pendingConflictCopies(in: library.url).count == 1)
        // Every listing and stat of the walk went through the seam.
        #expect(faults.trace.contains { $0.call == .listDirectory && $0.name == package.path })
        #expect(faults.trace.contains { $0.call == .status && $0.name == package.path })

        faults.fail(.listDirectory, with: .permissionDenied)
        do {
            try store.adoptConflictCopies(in: library.url)
            Issue.record("the listing's failure was not reported")
        } catch {
            #expect(error.code == .permissionDenied && error.path == library.url.path, "\(error)")
            #expect(error.localizedDescription.contains(library.url.path))
        }
        // Nothing was adopted or moved.
        #expect(FileManager.default.fileExists(atPath: package.appendingPathComponent("body.sync-conflict-20261122-061514-OX5HCJ3.md").path))
    }

    @Test func adoptingTheSameCopiesOnTwoMachinesWritesByteIdenticalStores() throws {
        var records: [Data] = []
        var ids: [String] = []
        for _ in 0..<2 {
            let library = try TemporaryDirectory()
            let package = library.appending("trip.note")
            try Self.makePackage(at: package, body: "winner")
            let copy = package.appendingPathComponent("body.sync-conflict-20261122-061514-OX5HCJ3.md")
            try Data("loser".utf8).write(to: copy)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_795_000_000)], ofItemAtPath: copy.path)
            let version = try #require(try VersionStore(libraryURL: library.url).adoptConflictCopies(in: library.url).first)
            ids.append(version.persistentIdentifier)
            records.append(try Data(contentsOf: version.url.deletingLastPathComponent().appendingPathComponent("record.json")))
        }
        #expect(ids[0] == ids[1])
        #expect(records[0] == records[1])
    }

    @Test func aCopyBesideADocumentBecomesItsConflictVersionAndLeavesTheFolder() throws {
        let library = try TemporaryDirectory()
        let file = library.appending("notes.txt")
        try Data("mine".utf8).write(to: file)
        let copy = library.appending("notes (Alice's conflicted copy 2026-11-22).txt")
        try Data("alice's".utf8).write(to: copy)
        let store = VersionStore(libraryURL: library.url)

        let version = try #require(try store.adoptConflictCopies(in: library.url).first)

        #expect(version.adoptedFrom == "dropbox" && version.savingUser == "Alice")
        #expect(try Self.read(version.url) == "alice's")
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        #expect(try Self.read(file) == "mine")
        #expect(try store.versions(ofItemAt: file).unresolvedConflicts.count == 1)
    }

    @Test func copiesCanBeLeftInPlaceAndAdoptingThemAgainAddsNothing() throws {
        let library = try TemporaryDirectory()
        let file = library.appending("todo.md")
        try Data("mine".utf8).write(to: file)
        let copy = library.appending("todo.md.conflict1")
        try Data("theirs".utf8).write(to: copy)
        let store = VersionStore(libraryURL: library.url)

        let first = try store.adoptConflictCopies(in: library.url, leavingCopiesInPlace: true)
        let second = try store.adoptConflictCopies(in: library.url, leavingCopiesInPlace: true)

        #expect(FileManager.default.fileExists(atPath: copy.path))
        #expect(first.map(\.persistentIdentifier) == second.map(\.persistentIdentifier))
        #expect(try store.versions(ofItemAt: file).others.count == 1)
    }

    @Test("a name shaped like a copy is left alone beside no original of its kind, and for engines the library doesn't live under")
    func lookalikesAreLeftAlone() throws {
        let library = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: library.appending("report"), withIntermediateDirectories: true)
        try Data("a file".utf8).write(to: library.appending("report.conflict1"))
        try Data("mine".utf8).write(to: library.appending("todo.md"))
        try Data("theirs".utf8).write(to: library.appending("todo.md.conflict1"))
        let syncthingOnly = VersionStore(libraryURL: library.url, syncEngines: [.syncthing])

        #expect(try syncthingOnly.adoptConflictCopies(in: library.url).isEmpty)
        #expect(syncthingOnly.pendingConflictCopies(in: library.url).isEmpty)
        #expect(try VersionStore(libraryURL: library.url).adoptConflictCopies(in: library.url).map(\.adoptedFrom) == ["rclone"])
        #expect(FileManager.default.fileExists(atPath: library.appending("report.conflict1").path))
    }

    @Test("inside a package, a file named like a copy is a member unless its original is beside it and the manifest doesn't list it")
    func membersNamedLikeCopiesStayMembers() throws {
        let library = try TemporaryDirectory()
        let package = library.appending("trip.note")
        try Self.makePackage(at: package, body: "current")
        let attachments = package.appendingPathComponent("attachments")
        try FileManager.default.createDirectory(at: attachments, withIntermediateDirectories: true)
        try Data("results".utf8).write(to: attachments.appendingPathComponent("results.conflict1"))
        try Data("x".utf8).write(to: attachments.appendingPathComponent("x.path1"))
        try FileManager.default.createDirectory(at: attachments.appendingPathComponent("x"), withIntermediateDirectories: true)

        #expect(try VersionStore(libraryURL: library.url).adoptConflictCopies(in: library.url).isEmpty)
        #expect(FileManager.default.fileExists(atPath: attachments.appendingPathComponent("results.conflict1").path))
        let tree = try FileWrapper(contentsOf: package).withoutConflictCopies(manifestName: "Info.json")
        #expect(tree["attachments"]?.fileWrappers?.keys.sorted() == ["results.conflict1", "x", "x.path1"])
    }

    @Test("a file the manifest lists is never read as a copy, even beside its original")
    func aListedMemberIsNeverACopy() throws {
        let format = FormatDescription(identifier: "org.example.test", version: 1)
        var manifest = format.makeManifest(writer: .init(name: "test", version: "1"), documentIdentifier: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        manifest.members = [
            "body.md": MemberRecord(size: 1, sha256: String(repeating: "0", count: 64)),
            "body.md.conflict1": MemberRecord(size: 1, sha256: String(repeating: "0", count: 64)),
        ]
        let tree = FileWrapper(directoryWithFileWrappers: [
            "Info.json": FileWrapper(regularFileWithContents: try manifest.jsonData()),
            "body.md": FileWrapper(regularFileWithContents: Data("a".utf8)),
            "body.md.conflict1": FileWrapper(regularFileWithContents: Data("b".utf8)),
            "body.md.conflict2": FileWrapper(regularFileWithContents: Data("c".utf8)),
        ])
        let clean = tree.withoutConflictCopies(manifestName: "Info.json")
        #expect(clean.fileWrappers?.keys.sorted() == ["Info.json", "body.md", "body.md.conflict1"])
    }

    @Test func aCopyWhoseDocumentIsGoneIsLeftAlone() throws {
        let library = try TemporaryDirectory()
        let copy = library.appending("gone.sync-conflict-20261122-061514-OX5HCJ3.txt")
        try Data("orphan".utf8).write(to: copy)
        #expect(try VersionStore(libraryURL: library.url).adoptConflictCopies(in: library.url).isEmpty)
        #expect(FileManager.default.fileExists(atPath: copy.path))
    }

    @Test func twoConflictsOfTheSameMemberBecomeTwoVersions() throws {
        let library = try TemporaryDirectory()
        let package = library.appending("trip.note")
        try Self.makePackage(at: package, body: "current")
        try Data("first".utf8).write(to: package.appendingPathComponent("body.sync-conflict-20261122-061514-OX5HCJ3.md"))
        try Data("second".utf8).write(to: package.appendingPathComponent("body.sync-conflict-20261122-061520-OX5HCJ3.md"))
        let store = VersionStore(libraryURL: library.url)

        let adopted = try store.adoptConflictCopies(in: library.url)

        #expect(Set(try adopted.map { try Self.read($0.url.appendingPathComponent("body.md")) }) == ["first", "second"])
        #expect(try store.unresolvedConflictVersions(ofItemAt: package).count == 2)
    }

    @Test func aDocumentNeverReadsConflictCopiesAsPartOfItsPackage() throws {
        var tree = FileWrapper(directoryWithFileWrappers: [
            "body.md": FileWrapper(regularFileWithContents: Data("a".utf8)),
            "body.sync-conflict-20261122-061514-OX5HCJ3.md": FileWrapper(regularFileWithContents: Data("b".utf8)),
            "~syncthing~body.md.tmp": FileWrapper(regularFileWithContents: Data("c".utf8)),
        ])
        tree["attachments"] = FileWrapper(directoryWithFileWrappers: [
            "photo (conflicted copy 2026-11-22 101500).jpg": FileWrapper(regularFileWithContents: Data("d".utf8)),
            "photo.jpg": FileWrapper(regularFileWithContents: Data("e".utf8)),
        ])
        let clean = tree.withoutConflictCopies(manifestName: nil)
        #expect(clean.fileWrappers?.keys.sorted() == ["attachments", "body.md"])
        #expect(clean["attachments"]?.fileWrappers?.keys.sorted() == ["photo.jpg"])
    }
}

/// `NSFileVersion`'s class and instance methods, on the store of the item's library.
@Suite struct FileVersionClassMethodTests {
    @Test func theClassMethodsFindTheStoreOfTheItemsLibrary() throws {
        let library = try TemporaryDirectory()
        let folder = library.appending("sub")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("a.txt")
        try Data("one".utf8).write(to: file)
        // A store at the library's root, found from an item in a subfolder.
        try VersionStore(libraryURL: library.url).save(FileWrapper(regularFileWithContents: Data("two".utf8)), to: file, keepingReplacedAs: .save)
        let current = try #require(FileVersion.currentVersionOfItem(at: file))
        #expect(current.isCurrent && current.url == file)
        let other = try #require(try FileVersion.otherVersionsOfItem(at: file).first)
        #expect(try String(contentsOf: other.url, encoding: .utf8) == "one")
        #expect(try FileVersion.version(itemAt: file, forPersistentIdentifier: other.persistentIdentifier) == other)

        let theirs = library.appending("theirs.txt")
        try Data("theirs".utf8).write(to: theirs)
        let added = try FileVersion.addOfItem(at: file, withContentsOf: theirs, byMoving: true)
        #expect(!FileManager.default.fileExists(atPath: theirs.path))
        #expect(try FileVersion.otherVersionsOfItem(at: file).count == 2)

        try other.replaceItem()
        #expect(try String(contentsOf: file, encoding: .utf8) == "one")
        try added.remove()
        try FileVersion.removeOtherVersionsOfItem(at: file)
        #expect(try FileVersion.otherVersionsOfItem(at: file).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(VersionStore.folderName).path))
    }
}
