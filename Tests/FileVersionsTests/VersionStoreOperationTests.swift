#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Every operation of the version store, on files and on packages.
@Suite("Version store operations", .timeLimit(.minutes(2)))
struct VersionStoreOperationTests {
    // MARK: Adding

    @Test func addingAVersionOfAFileKeepsItsBytesAndRecordsWhereWhenAndWhoMadeIt() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("notes.txt", "first draft\n", modified: fixedDate)
        let store = library.store()
        let version = try store.addVersion(ofItemAt: item, origin: .externalChange)

        #expect(try Data(contentsOf: version.url) == Data("first draft\n".utf8))
        #expect(version.url.path.hasPrefix(library.storeURL.appendingPathComponent("documents").path + "/path-"))
        #expect(version.url.lastPathComponent == "item")
        #expect(version.itemURL == item)
        #expect(!version.isCurrent)
        #expect(version.origin == .externalChange)
        #expect(version.localizedName == "notes.txt")
        #expect(version.localizedNameOfSavingComputer == ProcessInfo.processInfo.hostName)
        #expect(version.savingUser == store.savingUser)
        #expect(version.modificationDate.map { abs($0.timeIntervalSince(fixedDate)) < 0.002 } == true)
        // Not a conflict: resolved by definition, never an unresolved conflict.
        #expect(!version.isConflict)
        #expect(version.isResolved)
        #expect(!version.isUnresolvedConflict)
        #expect(version.resolution == nil)
        #expect(version.persistentIdentifier.hasPrefix("20260304T050607Z-"))
        #expect(version.persistentIdentifier.count == 33)

        let record = try record(of: version)
        #expect(record["id"] as? String == version.persistentIdentifier)
        #expect(record["kind"] as? String == "file")
        #expect(record["origin"] as? String == "externalChange")
        #expect(record["modified"] as? String == "2026-03-04T05:06:07.890Z")
        #expect(record["conflict"] as? Bool == false)
        #expect(record["name"] as? String == "notes.txt")
        let storeDescription = try String(contentsOf: library.storeURL.appendingPathComponent("store.json"), encoding: .utf8)
        #expect(storeDescription.contains("\"org.documentkit.version-store\""))

        let listing = try store.versions(ofItemAt: item)
        #expect(listing.others == [version])
        #expect(listing.problems.isEmpty)
        #expect(listing.current?.isCurrent == true)
        #expect(listing.current?.url == item)
        #expect(try Data(contentsOf: item) == Data("first draft\n".utf8))
    }

    @Test func addingAVersionOfAPackageKeepsEveryMemberAsAPrivateCopy() throws {
        let library = try VersionLibrary()
        let members = ["body.md": "Day one", "attachments/map.txt": "north", "attachments/deep/list.txt": "a, b"]
        let item = try library.writePackage("trip.note", members, documentIdentifier: "TRIP-1")
        let store = library.store()
        let version = try store.addVersion(ofItemAt: item, ancestorIdentifier: "20260101T000000Z-0000000000000000")

        #expect(try contents(of: version.url) == contents(of: item))
        #expect(try texts(of: version.url) == members)
        #expect(version.url.deletingLastPathComponent().deletingLastPathComponent().lastPathComponent == "id-TRIP-1")
        #expect(version.origin == .added)
        #expect(version.ancestorIdentifier == "20260101T000000Z-0000000000000000")
        #expect(try record(of: version)["kind"] as? String == "package")
        #expect(try record(of: version)["documentIdentifier"] as? String == "TRIP-1")
        // Members are private copies, never the current package's files (format 2).
        for path in members.keys {
            #expect(try inode(version.url.appendingPathComponent(path).path) != inode(item.appendingPathComponent(path).path), "\(path)")
        }
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [version.persistentIdentifier])
    }

    @Test func addingTheSameContentsTwiceGivesOneVersion() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let file = try library.writeFile("a.txt", "same", modified: fixedDate)
        let first = try store.addVersion(ofItemAt: file)
        let second = try store.addVersion(ofItemAt: file)
        #expect(first.persistentIdentifier == second.persistentIdentifier)
        #expect(try store.versions(ofItemAt: file).others.count == 1)

        let package = try library.writePackage("b.note", ["body.md": "same"], documentIdentifier: "B")
        let firstPackage = try store.addVersion(ofItemAt: package)
        let secondPackage = try store.addVersion(ofItemAt: package)
        #expect(firstPackage.persistentIdentifier == secondPackage.persistentIdentifier)
        #expect(try store.versions(ofItemAt: package).others.count == 1)

        // The same contents kept in another library (another machine) get the same id.
        let elsewhere = try VersionLibrary()
        let copy = try elsewhere.writeFile("a.txt", "same", modified: fixedDate)
        #expect(try elsewhere.store().addVersion(ofItemAt: copy).persistentIdentifier == first.persistentIdentifier)
    }

    @Test func differentContentsAddedInTheSameSecondAreTwoVersions() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let file = try library.writeFile("a.txt", "one", modified: fixedDate)
        let first = try store.addVersion(ofItemAt: file)
        try library.writeFile("a.txt", "two", modified: fixedDate)
        let second = try store.addVersion(ofItemAt: file)
        #expect(first.persistentIdentifier != second.persistentIdentifier)
        let kept = try store.versions(ofItemAt: file).others.map { try String(contentsOf: $0.url, encoding: .utf8) }
        #expect(kept.sorted() == ["one", "two"])
    }

    /// A manifest that records no members says nothing of the contents: two packages with the
    /// same such manifest, saved in the same second, are two versions, not one.
    @Test func packagesWhoseManifestRecordsNoMembersAreNotMistakenForEachOther() throws {
        let library = try VersionLibrary()
        let manifest = try VersionLibrary.format.makeManifest(writer: VersionLibrary.writer, documentIdentifier: "BARE").jsonData()
        func package(_ body: String) -> FileWrapper {
            FileWrapper(directoryWithFileWrappers: [
                "Info.json": FileWrapper(regularFileWithContents: manifest), "body.md": FileWrapper(regularFileWithContents: Data(body.utf8)),
            ])
        }
        let item = library.item("bare.note")
        try package("v1").write(to: item)
        let store = library.store()
        for body in ["v2", "v3", "v4"] {
            try store.save(package(body), to: item, keepingReplacedAs: .save)
            try library.setModified(item, fixedDate)  // every save in the same second
        }
        let kept = try store.versions(ofItemAt: item).others.map { try texts(of: $0.url)["body.md"] ?? "?" }
        #expect(kept.sorted() == ["v1", "v2", "v3"])
    }

    @Test func addingOtherContentsByCopyingLeavesTheSource() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "current")
        let source = try library.writeFile("edits.txt", "unsaved edits")
        let store = library.store()
        let version = try store.addVersion(ofItemAt: item, withContentsOf: source, origin: .conflict, isConflict: true, byMoving: false)
        #expect(try String(contentsOf: version.url, encoding: .utf8) == "unsaved edits")
        #expect(try String(contentsOf: source, encoding: .utf8) == "unsaved edits")
        #expect(try inode(source.path) != inode(version.url.path))
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")
        #expect(version.localizedName == "a.txt")
        #expect(version.isConflict && !version.isResolved && version.isUnresolvedConflict)
        #expect(try store.unresolvedConflictVersions(ofItemAt: item) == [version])
    }

    @Test func addingOtherContentsByMovingTakesTheSourceIntoTheStore() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "current")
        let source = try library.writeFile("edits.txt", "unsaved edits")
        let sourceInode = try inode(source.path)
        let store = library.store()
        let version = try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(try inode(version.url.path) == sourceInode)
        #expect(try String(contentsOf: version.url, encoding: .utf8) == "unsaved edits")
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")

        // A package too.
        let package = try library.writePackage("p.note", ["body.md": "current"], documentIdentifier: "P")
        let packageSource = try library.writePackage("p-edits", ["body.md": "edited", "extra/x.txt": "x"])
        let packageVersion = try store.addVersion(ofItemAt: package, withContentsOf: packageSource, byMoving: true)
        #expect(!FileManager.default.fileExists(atPath: packageSource.path))
        #expect(try texts(of: packageVersion.url) == ["body.md": "edited", "extra/x.txt": "x"])
        #expect(try store.versions(ofItemAt: package).others.map(\.persistentIdentifier) == [packageVersion.persistentIdentifier])
    }

    // MARK: Restoring

    @Test func restoringAVersionKeepsTheReplacedContentsAsAVersion() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1", "old.txt": "only in v1"], documentIdentifier: "TRIP")
        let store = library.store()
        let v1 = try #require(store.save(
            VersionLibrary.package(["body.md": "v2", "new.txt": "only in v2"], documentIdentifier: "TRIP"), to: item,
            keepingReplacedAs: .save).kept)

        let restored = try store.replaceItem(at: item, with: v1)
        #expect(restored == item)
        // The item is exactly v1: nothing of v2 left in it.
        #expect(try texts(of: item) == ["body.md": "v1", "old.txt": "only in v1"])
        let others = try store.versions(ofItemAt: item).others
        #expect(others.count == 2)
        let keptV2 = try #require(others.first { $0.persistentIdentifier != v1.persistentIdentifier })
        #expect(try texts(of: keptV2.url) == ["body.md": "v2", "new.txt": "only in v2"])
        #expect(keptV2.origin == .save)
        #expect(try texts(of: v1.url) == ["body.md": "v1", "old.txt": "only in v1"])

        // Keeping nothing: the replaced contents are gone.
        try store.replaceItem(at: item, with: keptV2, keepingCurrentAs: nil)
        #expect(try texts(of: item) == ["body.md": "v2", "new.txt": "only in v2"])
        #expect(try store.versions(ofItemAt: item).others.count == 2)
        // Restoring the current version changes nothing.
        let current = try #require(store.currentVersion(ofItemAt: item))
        try store.replaceItem(at: item, with: current)
        #expect(store.currentVersion(ofItemAt: item)?.persistentIdentifier == current.persistentIdentifier)
    }

    @Test func restoringIsAtomicAReaderAlwaysSeesAWholePackage() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("pair.pkg", ["a": "1", "b": "1"])
        let store = library.store()
        let one = try #require(store.save(VersionLibrary.package(["a": "2", "b": "2"]), to: item, keepingReplacedAs: .save).kept)
        let two = try #require(store.currentVersion(ofItemAt: item))
        let twoKept = try store.addVersion(ofItemAt: item)
        _ = two

        final class Reader: Sendable {
            let stop = Atomic<Bool>(false)
            let state = Mutex<(reads: Int, problems: [String])>((0, []))
        }
        let reader = Reader()
        let finished = DispatchSemaphore(value: 0)
        let path = item.path
        Thread.detachNewThread {
            while !reader.stop.load(ordering: .acquiring) {
                let problem = readPair(atPath: path)
                reader.state.withLock { state in
                    state.reads += 1
                    if let problem { state.problems.append(problem) }
                }
            }
            finished.signal()
        }
        for round in 0..<40 {
            try store.replaceItem(at: item, with: round % 2 == 0 ? one : twoKept)
        }
        reader.stop.store(true, ordering: .releasing)
        finished.wait()
        let (reads, problems) = reader.state.withLock { ($0.reads, $0.problems) }
        #expect(reads > 0)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(try texts(of: item) == ["a": "2", "b": "2"])
        // No temporary item left beside it.
        #expect(try library.folder.contents() == [VersionStore.folderName, "pair.pkg"])
    }

    // MARK: Resolving and removing

    @Test func markingAConflictResolvedTakesItOutOfTheUnresolvedOnesAndRecordsHow() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "mine")
        let theirs = try library.writeFile("theirs.txt", "theirs")
        let store = library.store()
        let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, origin: .conflict, isConflict: true)
        #expect(try store.versions(ofItemAt: item).unresolvedConflicts == [conflict])

        let resolved = try store.markResolved(conflict, as: .keptCurrent)
        #expect(resolved.isConflict)
        #expect(resolved.isResolved)
        #expect(!resolved.isUnresolvedConflict)
        #expect(resolved.resolution == .keptCurrent)
        #expect(resolved.persistentIdentifier == conflict.persistentIdentifier)

        let listing = try library.store().versions(ofItemAt: item)
        #expect(listing.unresolvedConflicts.isEmpty)
        #expect(listing.others.map(\.persistentIdentifier) == [conflict.persistentIdentifier])
        #expect(listing.others.first?.resolution == .keptCurrent)
        let resolution = try #require(try record(of: resolved)["resolution"] as? [String: Any])
        // The version's entry is as it was (format 3: an entry never changes once named); its new state is an entry of its own.
        let entry = conflict.url.deletingLastPathComponent()
        let own = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: entry.appendingPathComponent("record.json"))) as? [String: Any])
        #expect(own["resolved"] as? Bool == false && own["resolution"] == nil)
        let states = try FileManager.default.contentsOfDirectory(atPath: entry.deletingLastPathComponent().path).filter { $0.contains(".state-") }
        #expect(states.count == 1 && states[0].hasPrefix(conflict.persistentIdentifier + ".state-"), "\(states)")
        #expect(resolution["how"] as? String == "keptCurrent")
        #expect(resolution["host"] as? String == store.savingComputerName)
        let date = try #require(resolution["date"] as? String)
        #expect(ISO8601DateFormatter().date(from: date.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression))
            .map { abs($0.timeIntervalSinceNow) < 60 } == true)
        // Marking it again changes nothing.
        #expect(try store.markResolved(resolved, as: .merged).resolution == .keptCurrent)
    }

    @Test func removingTheCurrentVersionIsAnError() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "x")
        let store = library.store()
        let current = try #require(store.currentVersion(ofItemAt: item))
        #expect(current.isCurrent)
        let error = #expect(throws: DocumentKitError.self) { try store.remove(current) }
        #expect(error?.code == .invalidArgument)
        #expect(try String(contentsOf: item, encoding: .utf8) == "x")
    }

    @Test func removingAnUnresolvedConflictNeedsToBeAskedForExplicitly() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "x")
        let theirs = try library.writeFile("theirs.txt", "y")
        let store = library.store()
        let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, isConflict: true)
        let error = #expect(throws: DocumentKitError.self) { try store.remove(conflict) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.detail?.contains(conflict.persistentIdentifier) == true)
        #expect(FileManager.default.fileExists(atPath: conflict.url.path))

        try store.remove(conflict, evenIfUnresolvedConflict: true)
        #expect(!FileManager.default.fileExists(atPath: conflict.url.deletingLastPathComponent().path))
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
    }

    @Test func removingAVersionDeletesItsFolderOnly() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "one")
        let store = library.store()
        let first = try store.addVersion(ofItemAt: item)
        try library.writeFile("a.txt", "two")
        let second = try store.addVersion(ofItemAt: item)
        try store.remove(first)
        #expect(try store.versions(ofItemAt: item).others == [second])
        #expect(!FileManager.default.fileExists(atPath: first.url.deletingLastPathComponent().path))
        // No leftover (hidden or not) in the document's folder.
        let folder = first.url.deletingLastPathComponent().deletingLastPathComponent()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [second.persistentIdentifier])
        // Removing it again is harmless.
        try store.remove(first)
    }

    @Test func removingOtherVersionsKeepsUnresolvedConflictsUnlessAsked() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "one")
        let store = library.store()
        try store.addVersion(ofItemAt: item)
        try library.writeFile("a.txt", "two")
        try store.addVersion(ofItemAt: item)
        let theirs = try library.writeFile("theirs.txt", "theirs")
        let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, isConflict: true)
        let resolvedSource = try library.writeFile("resolved.txt", "resolved")
        let resolved = try store.markResolved(store.addVersion(ofItemAt: item, withContentsOf: resolvedSource, isConflict: true), as: .merged)
        #expect(try store.versions(ofItemAt: item).others.count == 4)

        try store.removeOtherVersions(ofItemAt: item)
        #expect(try store.versions(ofItemAt: item).others == [conflict])
        #expect(!FileManager.default.fileExists(atPath: resolved.url.path))
        #expect(try String(contentsOf: item, encoding: .utf8) == "two")

        try store.removeOtherVersions(ofItemAt: item, includingUnresolvedConflicts: true)
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
        #expect(try String(contentsOf: item, encoding: .utf8) == "two")
    }

    // MARK: Identifiers

    @Test func versionsAreFoundByTheirIdentifierAfterARestart() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1"], documentIdentifier: "TRIP")
        let kept: FileVersion
        do {
            let store = library.store()
            kept = try #require(store.save(VersionLibrary.package(["body.md": "v2"], documentIdentifier: "TRIP"), to: item, keepingReplacedAs: .autosave).kept)
        }
        // A new store, as after the app restarted, found from the item.
        let store = VersionStore.forItem(at: item)
        #expect(store.libraryURL.path == library.url.path)
        let found = try #require(try store.version(ofItemAt: item, withPersistentIdentifier: kept.persistentIdentifier))
        #expect(found.url.path == kept.url.path)
        #expect(found.origin == .autosave)
        #expect(found.modificationDate == kept.modificationDate)
        #expect(found.localizedNameOfSavingComputer == kept.localizedNameOfSavingComputer)
        #expect(found.savingUser == kept.savingUser)
        #expect(try texts(of: found.url) == ["body.md": "v1"])
        #expect(try store.version(ofItemAt: item, withPersistentIdentifier: "20260101T000000Z-0123456789abcdef") == nil)
    }

    @Test func theCurrentVersionIdentifierChangesWithEverySave() throws {
        let library = try VersionLibrary()
        let file = try library.writeFile("a.txt", "one")
        let package = try library.writePackage("p.note", ["body.md": "one"])
        let store = library.store()
        for item in [file, package] {
            let before = try #require(store.currentVersion(ofItemAt: item))
            #expect(store.currentVersion(ofItemAt: item)?.persistentIdentifier == before.persistentIdentifier)
            #expect(try store.version(ofItemAt: item, withPersistentIdentifier: before.persistentIdentifier)?.isCurrent == true)
            let tree = item == file ? FileWrapper(regularFileWithContents: Data("two".utf8)) : try VersionLibrary.package(["body.md": "two"])
            try store.save(tree, to: item, keepingReplacedAs: .save)
            let after = try #require(store.currentVersion(ofItemAt: item))
            #expect(after.persistentIdentifier != before.persistentIdentifier)
            #expect(try store.version(ofItemAt: item, withPersistentIdentifier: before.persistentIdentifier) == nil)
            #expect(try store.version(ofItemAt: item, withPersistentIdentifier: after.persistentIdentifier)?.url == item)
        }
        #expect(store.currentVersion(ofItemAt: library.item("missing.txt")) == nil)
    }

    // MARK: Saving

    @Test func savingAPackageKeepsTheReplacedPackageExactly() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1", "photos/a.txt": "A", "photos/b.txt": "B"], documentIdentifier: "TRIP")
        let before = try contents(of: item)
        let store = library.store()
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
        let (saved, kept) = try store.save(tree, to: item, keepingReplacedAs: .autosave)
        let version = try #require(kept)
        #expect(try contents(of: version.url) == before)
        #expect(try texts(of: item) == ["body.md": "v2", "photos/a.txt": "A", "photos/b.txt": "B"])
        #expect(try saved["body.md"]?.regularFileContents == Data("v2".utf8))
        #expect(version.origin == .autosave)
        #expect(version.localizedName == "trip.note")
        // No member is shared with the new package.
        #expect(try inode(version.url.appendingPathComponent("photos/a.txt").path) != inode(item.appendingPathComponent("photos/a.txt").path))
        #expect(try inode(version.url.appendingPathComponent("body.md").path) != inode(item.appendingPathComponent("body.md").path))
        #expect(try store.versions(ofItemAt: item).others == [version])
        // Nothing left beside the item or in the store but the version.
        #expect(try library.folder.contents() == [VersionStore.folderName, "trip.note"])
        let folder = version.url.deletingLastPathComponent().deletingLastPathComponent()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [version.persistentIdentifier])
    }

    @Test func savingAFileKeepsTheReplacedFileExactly() throws {
        let library = try VersionLibrary()
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let item = library.item("data.bin")
        try bytes.write(to: item)
        let oldInode = try inode(item.path)
        let store = library.store()
        let (_, kept) = try store.save(FileWrapper(regularFileWithContents: Data("new".utf8)), to: item, keepingReplacedAs: .save)
        let version = try #require(kept)
        #expect(try Data(contentsOf: version.url) == bytes)
        #expect(try inode(version.url.path) != oldInode)
        #expect(try status(version.url.path).st_nlink == 1)
        #expect(try Data(contentsOf: item) == Data("new".utf8))
        #expect(try record(of: version)["kind"] as? String == "file")
        #expect(try store.versions(ofItemAt: item).others == [version])
    }

    @Test func savingWhereNoItemIsKeepsNothing() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let file = library.item("new.txt")
        let (_, keptFile) = try store.save(FileWrapper(regularFileWithContents: Data("hello".utf8)), to: file, keepingReplacedAs: .save)
        #expect(keptFile == nil)
        #expect(try String(contentsOf: file, encoding: .utf8) == "hello")
        let package = library.item("new.note")
        let (_, keptPackage) = try store.save(VersionLibrary.package(["body.md": "hi"], documentIdentifier: "NEW"), to: package, keepingReplacedAs: .save)
        #expect(keptPackage == nil)
        #expect(try store.versions(ofItemAt: file).others.isEmpty)
        #expect(try store.versions(ofItemAt: package).others.isEmpty)
        #expect(library.documentFolders().isEmpty)
    }

    @Test func savingWithoutAnOriginKeepsNothing() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "one")
        let store = library.store()
        let (_, kept) = try store.save(FileWrapper(regularFileWithContents: Data("two".utf8)), to: item, keepingReplacedAs: nil)
        #expect(kept == nil)
        #expect(try String(contentsOf: item, encoding: .utf8) == "two")
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
    }

    @Test func aFailedSaveKeepsNothingAndLeavesTheItemWhole() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("trip.note", ["body.md": "v1", "a.txt": "A"], documentIdentifier: "TRIP")
        let before = try contents(of: item)
        let store = library.store()
        let faults = FaultInjector()
        faults.fail(.write, with: .noSpace)
        var tree = try FileWrapper(contentsOf: item)
        tree["body.md"] = FileWrapper(regularFileWithContents: Data("v2".utf8))
        let error = #expect(throws: DocumentKitError.self) {
            try store.save(tree, to: item, options: SaveOptions(fileSystem: faults.fileSystem), keepingReplacedAs: .save)
        }
        #expect(error?.code == .noSpace)
        #expect(try contents(of: item) == before)
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
        for folder in library.documentFolders() {
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(folder.path)")
        }
    }

    // MARK: Pruning

    /// Ten versions 100 s apart from `base`, and an older unresolved conflict, kept by a store that keeps everything.
    static func tenVersions(in library: VersionLibrary, base: Date) throws -> (item: URL, ids: [String], conflict: FileVersion) {
        let item = library.item("a.txt")
        let store = library.store()
        let theirs = try library.writeFile("theirs.txt", "theirs", modified: base.addingTimeInterval(-1000))
        try library.writeFile("a.txt", "current")
        let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, isConflict: true)
        var ids: [String] = []
        for index in 0..<10 {
            let source = try library.writeFile("source.txt", "version \(index)", modified: base.addingTimeInterval(Double(index) * 100))
            ids.append(try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true).persistentIdentifier)
        }
        #expect(try store.versions(ofItemAt: item).others.count == 11)
        return (item, ids, conflict)
    }

    @Test func pruningThinsOldVersionsKeepsTheNewestAndNeverUnresolvedConflicts() throws {
        let library = try VersionLibrary()
        let base = fixedDate
        let (item, ids, conflict) = try Self.tenVersions(in: library, base: base)
        let schedule = PruningSchedule(bands: [.init(until: 3600, interval: 300)], maximumAge: 7 * 86_400)
        let store = library.store(pruning: schedule)

        // Ages 60 s (newest) to 960 s: one per 300 s is kept.
        try store.prune(ofItemAt: item, now: base.addingTimeInterval(960))
        var listing = try store.versions(ofItemAt: item)
        #expect(listing.others.map(\.persistentIdentifier) == [ids[9], ids[6], ids[3], ids[0], conflict.persistentIdentifier])
        #expect(listing.problems.isEmpty)

        // Far in the future: everything is past the maximum age but the newest and the conflict.
        try store.prune(ofItemAt: item, now: base.addingTimeInterval(365 * 86_400))
        listing = try store.versions(ofItemAt: item)
        #expect(listing.others.map(\.persistentIdentifier) == [ids[9], conflict.persistentIdentifier])
        #expect(try String(contentsOf: listing.others[0].url, encoding: .utf8) == "version 9")

        // Once resolved, the conflict is pruned like any other version.
        try store.markResolved(conflict, as: .keptCurrent)
        try store.prune(ofItemAt: item, now: base.addingTimeInterval(365 * 86_400))
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [ids[9]])
        #expect(try String(contentsOf: item, encoding: .utf8) == "current")
    }

    @Test func pruningKeepsTheStoreUnderItsSizeLimitOldestFirst() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.bin", "current")
        let keepAll = library.store()
        var random = SeededRandom(seed: 7)
        func source(_ index: Int) throws -> URL {
            let url = library.item("source-\(index).bin")
            try Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: url)
            try library.setModified(url, fixedDate.addingTimeInterval(Double(index) * 60))
            return url
        }
        let conflict = try keepAll.addVersion(ofItemAt: item, withContentsOf: source(0), isConflict: true, byMoving: true)
        var ids: [String] = []
        for index in 1...5 {
            ids.append(try keepAll.addVersion(ofItemAt: item, withContentsOf: source(index), byMoving: true).persistentIdentifier)
        }
        let one = Int64(try status(conflict.url.path).st_blocks) * 512
        #expect(one >= 65_536)
        let store = library.store(pruning: PruningSchedule(bands: [], maximumBytes: 3 * one))
        try store.prune(ofItemAt: item, now: fixedDate.addingTimeInterval(3600))
        // The conflict's bytes count, but it stays: the two newest ordinary versions fit beside it.
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [ids[4], ids[3], conflict.persistentIdentifier])

        // A limit smaller than one version keeps the newest anyway.
        try library.store(pruning: PruningSchedule(bands: [], maximumBytes: 1)).prune(ofItemAt: item, now: fixedDate)
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [ids[4], conflict.persistentIdentifier])
    }

    @Test func addingAVersionPrunesByTheStoresSchedule() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("a.txt", "current")
        let store = library.store(pruning: PruningSchedule(bands: [], maximumAge: 3600))
        let now = Date()
        let old = try store.addVersion(
            ofItemAt: item, withContentsOf: library.writeFile("s.txt", "two days ago", modified: now.addingTimeInterval(-2 * 86_400)), byMoving: true)
        // Alone, it is the newest: kept.
        #expect(try store.versions(ofItemAt: item).others == [old])
        let newer = try store.addVersion(
            ofItemAt: item, withContentsOf: library.writeFile("s.txt", "one day ago", modified: now.addingTimeInterval(-86_400)), byMoving: true)
        #expect(try store.versions(ofItemAt: item).others == [newer])
        // A conflict is not pruned, and adding one prunes nothing.
        let conflict = try store.addVersion(
            ofItemAt: item, withContentsOf: library.writeFile("s.txt", "conflict", modified: now.addingTimeInterval(-3 * 86_400)), isConflict: true,
            byMoving: true)
        let newest = try store.addVersion(
            ofItemAt: item, withContentsOf: library.writeFile("s.txt", "now", modified: now.addingTimeInterval(-10)), byMoving: true)
        #expect(try store.versions(ofItemAt: item).others == [newest, conflict])
    }

    // MARK: Following the document

    @Test func aPackageWithADocumentIdentifierKeepsItsVersionsWhenRenamedOrMovedInTheLibrary() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("Trip.note", ["body.md": "v1"], documentIdentifier: "TRIP-42")
        let store = library.store()
        let kept = try #require(store.save(VersionLibrary.package(["body.md": "v2"], documentIdentifier: "TRIP-42"), to: item, keepingReplacedAs: .save).kept)

        let moved = library.item("Archive/2026/Trip to the coast.note")
        try FileManager.default.createDirectory(at: moved.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: item, to: moved)
        // The store is found by walking up from the new place.
        let found = VersionStore.forItem(at: moved, pruning: .keepAll)
        #expect(found.libraryURL.path == library.url.path)
        let listing = try found.versions(ofItemAt: moved)
        #expect(listing.others.map(\.persistentIdentifier) == [kept.persistentIdentifier])
        #expect(try texts(of: listing.others[0].url) == ["body.md": "v1"])
        #expect(listing.others[0].itemURL == moved)
        #expect(listing.others[0].localizedName == "Trip.note")  // its name when it was kept
        // Saving in the new place adds to the same versions.
        try found.save(VersionLibrary.package(["body.md": "v3"], documentIdentifier: "TRIP-42"), to: moved, keepingReplacedAs: .save)
        #expect(try found.versions(ofItemAt: moved).others.count == 2)
        #expect(library.documentFolders().map(\.lastPathComponent) == ["id-TRIP-42"])
    }

    /// The expected limitation: a document without a manifest is known by its path in the
    /// library, so renaming it leaves its versions behind (they come back if it is renamed back).
    @Test func aPlainFileIsKnownByItsPathSoItsVersionsStayBehindWhenRenamed() throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("notes.txt", "v1")
        let store = library.store()
        let kept = try #require(store.save(FileWrapper(regularFileWithContents: Data("v2".utf8)), to: item, keepingReplacedAs: .save).kept)
        let renamed = library.item("Folder/renamed.txt")
        try FileManager.default.createDirectory(at: renamed.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: item, to: renamed)
        #expect(try VersionStore.forItem(at: renamed).versions(ofItemAt: renamed).others.isEmpty)
        try FileManager.default.moveItem(at: renamed, to: item)
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [kept.persistentIdentifier])
        // A package without a manifest is known by its path too.
        let package = try library.writePackage("p.pkg", ["a": "1"])
        let other = try library.writePackage("q.pkg", ["a": "1"])
        try store.addVersion(ofItemAt: package)
        #expect(try store.versions(ofItemAt: other).others.isEmpty)
        #expect(try store.versions(ofItemAt: package).others.count == 1)
    }
}

/// Reads members `a` and `b` of the package at `path` through one descriptor of its folder:
/// nil when both are there and equal, else what was wrong.
func readPair(atPath path: String) -> String? {
    let folder = open(path, O_RDONLY | O_DIRECTORY)
    guard folder >= 0 else { return "the package could not be opened (errno \(errno))" }
    defer { close(folder) }
    func member(_ name: String) -> String? {
        let fd = openat(folder, name, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        return count >= 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }
    let a = member("a")
    let b = member("b")
    if a != nil && a == b { return nil }
    // A folder the reader opened before a save replaced it is removed after the swap: that is
    // not what is at the path. Only a torn package at the path is a problem.
    var opened = stat()
    var now = stat()
    if fstat(folder, &opened) == 0, stat(path, &now) == 0, opened.st_ino != now.st_ino { return nil }
    return "a = \(a ?? "missing"), b = \(b ?? "missing")"
}

/// The store under a real ``FileCoordinator``: every operation coordinates, nests inside the
/// app's own coordinated write of the item without deadlocking, and waits for other writers.
@Suite("Version store under coordination", .timeLimit(.minutes(1)))
struct VersionStoreCoordinationTests {
    /// Runs `body` on a thread of its own; fails (instead of hanging) if it takes longer than `limit`.
    static func withinTimeLimit(_ limit: TimeInterval, _ body: @escaping @Sendable () throws -> Void) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + limit) == .success else {
            Issue.record("Did not finish within \(limit) s: a deadlock")
            return
        }
        try outcome.withLock { $0 }!.get()
    }

    @Test func everyOperationRunsNestedInTheAppsCoordinatedWriteOfTheItem() throws {
        let namespaceFolder = try TemporaryDirectory(prefix: "dk-versions-ns")
        let library = try VersionLibrary()
        let namespace = try CoordinationNamespace(directory: namespaceFolder.url, packageExtensions: ["note"])
        let coordinator = FileCoordinator(namespace: namespace)
        let store = library.store(coordinator: coordinator)
        let item = try library.writePackage("trip.note", ["body.md": "v1"], documentIdentifier: "TRIP")
        let theirs = try library.writePackage("theirs.note", ["body.md": "theirs"], documentIdentifier: "TRIP")

        try Self.withinTimeLimit(20) {
            // Top level: each operation takes its own coordination.
            let added = try store.addVersion(ofItemAt: item)
            #expect(try texts(of: added.url) == ["body.md": "v1"])
            // Nested in the app's write of the item, as a Document's save is.
            try coordinator.coordinate(writingItemAt: item) { _ in
                let kept = try #require(try store.save(
                    VersionLibrary.package(["body.md": "v2"], documentIdentifier: "TRIP"), to: item, keepingReplacedAs: .save).kept)
                #expect(kept.persistentIdentifier == added.persistentIdentifier)  // v1 again: the same version
                let conflict = try store.addVersion(ofItemAt: item, withContentsOf: theirs, origin: .conflict, isConflict: true)
                let current = try store.addVersion(ofItemAt: item)
                #expect(try store.versions(ofItemAt: item).unresolvedConflicts == [conflict])
                try store.replaceItem(at: item, with: conflict)
                #expect(try texts(of: item) == ["body.md": "theirs"])
                try store.markResolved(conflict, as: .keptThis)
                try store.remove(current)
                try store.prune(ofItemAt: item)
                #expect(try store.version(ofItemAt: item, withPersistentIdentifier: added.persistentIdentifier) != nil)
                try store.removeOtherVersions(ofItemAt: item)
            }
            #expect(try store.versions(ofItemAt: item).others.isEmpty)
            #expect(try texts(of: item) == ["body.md": "theirs"])
        }
        // Nothing stays locked: a fresh write of the item is granted at once.
        try coordinator.coordinate(writingItemAt: item, timeout: .zero) { _ in }
    }

    @Test func aCoordinatedStoreWaitsForAnotherWriterOfTheItemAndAnUncoordinatedOneDoesNot() throws {
        let namespaceFolder = try TemporaryDirectory(prefix: "dk-versions-ns")
        let library = try VersionLibrary()
        let item = try library.writeFile("doc.txt", "v1")
        // Another writer: a coordinator of its own on the same namespace folder.
        let other = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceFolder.url))
        let store = library.store(coordinator: FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceFolder.url)))
        let uncoordinated = library.store()

        let holding = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? other.coordinate(writingItemAt: item) { _ in
                holding.signal()
                Thread.sleep(forTimeInterval: 0.5)
                try Data("v2".utf8).write(to: item)
            }
            released.signal()
        }
        #expect(holding.wait(timeout: .now() + 10) == .success)
        var started = Date()
        let seen = try uncoordinated.addVersion(ofItemAt: item)
        #expect(Date().timeIntervalSince(started) < 0.4)
        #expect(try String(contentsOf: seen.url, encoding: .utf8) == "v1")  // it read mid-write

        started = Date()
        let version = try store.addVersion(ofItemAt: item)
        #expect(Date().timeIntervalSince(started) > 0.2)
        #expect(try String(contentsOf: version.url, encoding: .utf8) == "v2")  // it waited for the write
        #expect(released.wait(timeout: .now() + 10) == .success)
    }

    @Test func theFoldersAFirstSaveMakesAreNamedOnDiskBeforeItsVersionIsKeptInThem() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library)
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: faults.fileSystem)
        try store.save(ExchangeKeepTests.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: SaveOptions(durability: .durable, fileSystem: faults.fileSystem), keepingReplacedAs: .save)
        let trace = faults.trace
        let documents = library.storeURL.appendingPathComponent("documents").path
        for (folder, parent) in [(documents, library.storeURL.path), (documents + "/id-TRIP", documents)] {
            let made = try #require(trace.firstIndex { $0.call == .makeDirectory && $0.name == folder }, "\(folder) was not made")
            let firstEntry = try #require(trace.firstIndex { $0.call == .makeDirectory && $0.name.hasPrefix(documents + "/id-TRIP/.") })
            #expect(trace[made..<firstEntry].contains { $0.call == .synchronizeDirectory && $0.name == parent },
                "\(parent) was not flushed after \(folder) was made, before the version's entry")
        }
    }
}
