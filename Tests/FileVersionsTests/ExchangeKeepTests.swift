// Version store format 4: a save that replaces a package by a package keeps the replaced one by
// exchanging it into the store (Formats/version-store/v4/SPEC.md).

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

@Suite("A replaced package is kept by exchanging it into the store", .timeLimit(.minutes(3)))
struct ExchangeKeepTests {
    /// A manifested package (its versions are named by their contents) and its next state.
    static func makeNote(_ library: VersionLibrary, members: [String: String] = ["body.md": "v1", "attachments/a.txt": "A"]) throws -> URL {
        try library.writePackage("trip.note", members, documentIdentifier: "TRIP")
    }

    static func tree(_ members: [String: String]) throws -> FileWrapper {
        try VersionLibrary.package(members, documentIdentifier: "TRIP")
    }

    /// The names in the document's folder of the store that start with a dot.
    static func hiddenEntries(_ library: VersionLibrary) throws -> [String] {
        try library.documentFolders().flatMap { try FileManager.default.contentsOfDirectory(atPath: $0.path).filter { $0.hasPrefix(".") } }
    }

    @Test func theReplacedPackageIsMovedIntoTheStoreNotCopied() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let folderInode = try inode(item.path)
        let bodyInode = try inode(item.appendingPathComponent("body.md").path)
        let store = library.store()

        let kept = try #require(try store.save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save).kept)

        #expect(try texts(of: item) == ["body.md": "v2", "attachments/a.txt": "A"])
        #expect(try texts(of: kept.url) == ["body.md": "v1", "attachments/a.txt": "A"])
        // The file the document had, moved, not copied; in a folder of the store's own (a process
        // whose working folder was the package does not reach the version).
        #expect(try inode(kept.url.appendingPathComponent("body.md").path) == bodyInode)
        #expect(try inode(kept.url.path) != folderInode)
        #expect(try Self.hiddenEntries(library).isEmpty)
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == [kept.persistentIdentifier])
        // Named by the replaced contents, as a copy would have been.
        let digest = try #require(kept.persistentIdentifier.split(separator: "-").last)
        let manifest = try Data(contentsOf: kept.url.appendingPathComponent("Info.json"))
        #expect(VersionLibraryDigest.sha256(manifest).hasPrefix(String(digest)))
    }

    @Test func membersTheNewPackageSharesWithTheReplacedOneAreMadePrivate() throws {
        let library = try VersionLibrary()
        let big = String(repeating: "x", count: 20_000)
        let item = try Self.makeNote(library, members: ["body.md": "v1", "attachments/big.bin": big])
        let store = library.store()
        var tree = try FileWrapper(contentsOf: item)
        for index in 2...4 {
            // Only the body changes: the save links the unchanged attachment into its new package.
            var next = try Self.tree(["body.md": "v\(index)", "attachments/big.bin": big])
            next["attachments"] = tree["attachments"]
            tree = try store.save(next, to: item, keepingReplacedAs: .save).saved
        }
        let versions = try store.versions(ofItemAt: item).others
        #expect(try Set(versions.map { try texts(of: $0.url)["body.md"] ?? "?" }) == ["v1", "v2", "v3"])
        let live = try inode(item.appendingPathComponent("attachments/big.bin").path)
        let stored = try Set(versions.map { try inode($0.url.appendingPathComponent("attachments/big.bin").path) })
        #expect(!stored.contains(live), "a version shares a file with the document")
        #expect(stored.count == 1, "the versions' identical attachments should be one file: \(stored)")
        #expect(try status(item.appendingPathComponent("attachments/big.bin").path).st_nlink == 1)

        // A write in place to the document's attachment reaches no version.
        try KeptVersionTests.writeInPlace(item.appendingPathComponent("attachments/big.bin"), appending: "edited")
        for version in versions {
            #expect(try texts(of: version.url)["attachments/big.bin"] == big)
        }
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    @Test func anUnchangedMemberIsLinkedFromTheVersionThatHasItWithoutReadingIt() throws {
        let library = try VersionLibrary()
        let big = String(repeating: "x", count: 200_000)
        let item = try Self.makeNote(library, members: ["body.md": "v1", "attachments/big.bin": big])
        try library.setModified(item.appendingPathComponent("attachments/big.bin"), Date(timeIntervalSinceNow: -3_600))
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: faults.fileSystem)
        var tree = try FileWrapper(contentsOf: item)
        var readsOfTheAttachment: [Int] = []
        for index in 2...4 {
            var next = try Self.tree(["body.md": "v\(index)", "attachments/big.bin": big])
            next["attachments"] = tree["attachments"]
            faults.reset()
            tree = try store.save(next, to: item, options: SaveOptions(durability: .consistent, fileSystem: faults.fileSystem), keepingReplacedAs: .save).saved
            readsOfTheAttachment.append(faults.trace.filter { $0.call == .read && $0.name.hasSuffix("big.bin") }.count)
        }
        // The first save copies it (nothing in the store has it yet); the next ones link that copy.
        #expect(readsOfTheAttachment.first ?? 0 > 0)
        #expect(readsOfTheAttachment.dropFirst().allSatisfy { $0 == 0 }, "\(readsOfTheAttachment)")
        let versions = try store.versions(ofItemAt: item).others
        let stored = try Set(versions.map { try inode($0.url.appendingPathComponent("attachments/big.bin").path) })
        let live = try inode(item.appendingPathComponent("attachments/big.bin").path)
        #expect(stored.count == 1 && !stored.contains(live))
        #expect(try versions.allSatisfy { try texts(of: $0.url)["attachments/big.bin"] == big })
    }

    @Test func aSaveThatCantCompleteTheVersionLeavesItForTheNextListingToComplete() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        try Self.saveLeavingItsVersionWaiting(library, item) { item in
            var tree = try Self.tree(["body.md": "v2", "attachments/a.txt": "A"])
            tree["attachments"] = try FileWrapper(contentsOf: item)["attachments"]
            return tree
        }
        #expect(try texts(of: item)["body.md"] == "v2")
        // The replaced package waits in its `.swap-` entry, still sharing the unchanged member.
        let waiting = try Self.hiddenEntries(library)
        #expect(waiting.count == 1 && waiting.first?.hasPrefix(".swap-") == true, "\(waiting)")
        let entry = try #require(library.documentFolders().first).appendingPathComponent(waiting[0])
        #expect(try inode(entry.appendingPathComponent("item/attachments/a.txt").path) == inode(item.appendingPathComponent("attachments/a.txt").path))

        let versions = try library.store().versions(ofItemAt: item)
        #expect(versions.problems.isEmpty)
        let version = try #require(versions.others.first)
        #expect(versions.others.count == 1)
        #expect(try texts(of: version.url) == ["body.md": "v1", "attachments/a.txt": "A"])
        #expect(try inode(version.url.appendingPathComponent("attachments/a.txt").path) != inode(item.appendingPathComponent("attachments/a.txt").path))
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    /// A save whose version waits in its `.swap-` entry (its folders not made anew: the listing of
    /// the replaced package fails), with `stale` a tree read before it.
    static func saveLeavingItsVersionWaiting(_ library: VersionLibrary, _ item: URL, _ makeTree: (URL) throws -> FileWrapper) throws {
        let rehearsal = try VersionLibrary()
        let rehearsalItem = try makeNote(rehearsal)
        let counter = FaultInjector()
        try VersionStore(libraryURL: rehearsal.url, pruning: .keepAll, durability: .consistent, fileSystem: counter.fileSystem)
            .save(makeTree(rehearsalItem), to: rehearsalItem, options: SaveOptions(durability: .consistent, fileSystem: counter.fileSystem), keepingReplacedAs: .save)
        let trace = counter.trace
        let exchange = try #require(trace.firstIndex { $0.call == .exchange })
        let listing = try #require(trace.indices.first { $0 > exchange && trace[$0].call == .listDirectory && trace[$0].name.hasSuffix("/item") })
        let faults = FaultInjector()
        faults.fail(call: listing + 1, with: .ioError)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: faults.fileSystem)
        let (_, kept) = try store.save(makeTree(item), to: item, options: SaveOptions(durability: .consistent, fileSystem: faults.fileSystem), keepingReplacedAs: .save)
        #expect(kept == nil)
    }

    @Test func aTreeReadBeforeAnotherSaveNeverLinksAFileOfAVersionIntoTheDocument() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        // Read now; its unchanged members would be hard-linked from where they were read.
        let stale = try FileWrapper(contentsOf: item)
        // Another save (another document, another process) keeps that package as a version, which
        // waits to be completed: its files are still in the folder the tree was read from.
        try Self.saveLeavingItsVersionWaiting(library, item) { _ in try Self.tree(["body.md": "v2", "attachments/a.txt": "A"]) }
        let waiting = try #require(try Self.hiddenEntries(library).first)
        let pending = try #require(library.documentFolders().first).appendingPathComponent(waiting + "/item/attachments/a.txt")
        // A third save while another process saves too (it holds the folder's lock shared, so this
        // save does not complete the waiting version first).
        let lock = open(library.storeURL.path + "/locks/id-TRIP", O_RDWR)
        try #require(lock >= 0)
        #expect(flock(lock, LOCK_SH) == 0)
        var next = try Self.tree(["body.md": "v3", "attachments/a.txt": "A"])
        next["attachments"] = stale["attachments"]
        try library.store().save(next, to: item, keepingReplacedAs: .save)
        let live = try inode(item.appendingPathComponent("attachments/a.txt").path)
        #expect(try inode(pending.path) != live, "the save linked the waiting version's file into the document")
        close(lock)

        #expect(try texts(of: item) == ["body.md": "v3", "attachments/a.txt": "A"])
        let versions = try library.store().versions(ofItemAt: item).others
        #expect(try versions.map { try texts(of: $0.url)["body.md"] ?? "?" }.sorted() == ["v1", "v2"])
        for version in versions {
            #expect(try inode(version.url.appendingPathComponent("attachments/a.txt").path) != live, "\(version.persistentIdentifier) shares a file with the document")
        }
        try KeptVersionTests.writeInPlace(item.appendingPathComponent("attachments/a.txt"), appending: "!")
        #expect(try versions.allSatisfy { try texts(of: $0.url)["attachments/a.txt"] == "A" })
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    @Test func aProcessInsideThePackageBeforeTheSaveNoLongerReachesTheKeptVersionByName() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        // A shell `cd`'d into the package, an editor holding its folder.
        let inside = open(item.path, O_RDONLY | O_DIRECTORY)
        try #require(inside >= 0)
        defer { close(inside) }
        let kept = try #require(try library.store().save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save).kept)

        // `echo >> body.md`, `> new.txt` from there: the folder is gone, as it was when the copy removed it.
        #expect(openat(inside, "body.md", O_WRONLY | O_APPEND) < 0 && errno == ENOENT)
        #expect(openat(inside, "new.txt", O_WRONLY | O_CREAT, 0o644) < 0)
        #expect(try texts(of: kept.url) == ["body.md": "v1", "attachments/a.txt": "A"])
    }

    @Test func anEntryThatCantBeReadNowIsLeftNotRemovedAndOneOfAnotherComputerIsLeftToIt() throws {
        // A save whose version can't be completed (the rename into place fails) leaves its entry.
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let rehearsal = try VersionLibrary()
        let rehearsalItem = try Self.makeNote(rehearsal)
        let counter = FaultInjector()
        try VersionStore(libraryURL: rehearsal.url, pruning: .keepAll, durability: .consistent, fileSystem: counter.fileSystem)
            .save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: rehearsalItem, options: SaveOptions(durability: .consistent), keepingReplacedAs: .save)
        let intoPlace = try #require(counter.trace.lastIndex { $0.call == .rename })
        let faults = FaultInjector()
        faults.fail(call: intoPlace + 1, with: .ioError)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: faults.fileSystem)
        let (_, kept) = try store.save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: SaveOptions(durability: .consistent), keepingReplacedAs: .save)
        #expect(kept == nil)
        let waiting = try Self.hiddenEntries(library)
        try #require(waiting.count == 1 && waiting[0].hasPrefix(".swap-"), "\(waiting)")
        #expect(try texts(of: item)["body.md"] == "v2")
        let entry = try #require(library.documentFolders().first).appendingPathComponent(waiting[0])

        // A cleaner that can't read the entry's record (out of descriptors, say) leaves it.
        let reading = FaultInjector()
        reading.fail(.open, with: .tooManyOpenFiles)
        VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .consistent, fileSystem: reading.fileSystem)
            .settleExchangeEntry(waiting[0], in: entry.deletingLastPathComponent(), key: nil)
        #expect(reading.trace.contains { $0.call == .open && $0.name.hasSuffix("record.json") }, "the record was not read")
        #expect(try Self.hiddenEntries(library) == waiting)

        // Contents its id no longer names (its manifest changed in place since), so only the inode
        // numbers its name records could tell; made by another computer (a sync engine delivered
        // it), where those numbers mean nothing: left to that computer.
        let manifest = entry.appendingPathComponent("item/Info.json")
        try (Data(contentsOf: manifest) + Data(" ".utf8)).write(to: manifest)
        let recordURL = entry.appendingPathComponent("record.json")
        let own = try Data(contentsOf: recordURL)
        var object = try #require(try JSONSerialization.jsonObject(with: own) as? [String: Any])
        let id = try #require(object["id"] as? String)
        object["host"] = "another-computer"
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]).write(to: recordURL)
        #expect(try library.store().versions(ofItemAt: item).others.isEmpty)
        #expect(try Self.hiddenEntries(library) == waiting)

        // Its own: completed, under a new id of the same date (the contents are not those the id named).
        try own.write(to: recordURL)
        let versions = try library.store().versions(ofItemAt: item).others
        #expect(try versions.map { try texts(of: $0.url)["body.md"] } == ["v1"])
        let completed = try #require(versions.first?.persistentIdentifier)
        #expect(completed != id && completed.prefix(16) == id.prefix(16), "\(completed) for \(id)")
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    @Test func anExchangeRefusedForWantOfPermissionCopiesThatSaveOnly() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let faults = FaultInjector()
        faults.fail(.exchange, with: .permissionDenied, once: true)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: faults.fileSystem)
        let options = SaveOptions(fileSystem: faults.fileSystem)
        let bodyInode = try inode(item.appendingPathComponent("body.md").path)
        let first = try #require(try store.save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: options, keepingReplacedAs: .save).kept)
        #expect(try texts(of: first.url)["body.md"] == "v1")
        #expect(try inode(first.url.appendingPathComponent("body.md").path) != bodyInode)  // copied
        let replaced = try inode(item.appendingPathComponent("body.md").path)
        let second = try #require(try store.save(Self.tree(["body.md": "v3", "attachments/a.txt": "A"]), to: item, options: options, keepingReplacedAs: .save).kept)
        #expect(try inode(second.url.appendingPathComponent("body.md").path) == replaced)  // exchanged again
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    @Test func aSaveWhoseExchangeFailsLeavesTheDocumentAndTheStoreAsTheyWere() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let before = try contents(of: item)
        let faults = FaultInjector()
        faults.fail(.exchange, with: .ioError, once: true)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: faults.fileSystem)
        let error = #expect(throws: DocumentKitError.self) {
            try store.save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: SaveOptions(fileSystem: faults.fileSystem), keepingReplacedAs: .save)
        }
        #expect(error?.originalIsIntact == true && error?.path == item.path, "\(String(describing: error))")
        #expect(try contents(of: item) == before)
        #expect(try store.versions(ofItemAt: item).others.isEmpty)
        #expect(try Self.hiddenEntries(library).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: library.url.path).sorted() == [VersionStore.folderName, "trip.note"])
    }

    @Test func aFileSystemWithoutExchangeKeepsTheReplacedPackageByCopy() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let bodyInode = try inode(item.appendingPathComponent("body.md").path)
        let faults = FaultInjector(refusingExchange: true)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: faults.fileSystem)
        let options = SaveOptions(fileSystem: faults.fileSystem)
        let first = try #require(try store.save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: options, keepingReplacedAs: .save).kept)
        #expect(try texts(of: first.url)["body.md"] == "v1")
        #expect(try inode(first.url.appendingPathComponent("body.md").path) != bodyInode)
        let second = try #require(try store.save(Self.tree(["body.md": "v3", "attachments/a.txt": "A"]), to: item, options: options, keepingReplacedAs: .save).kept)
        #expect(try texts(of: second.url)["body.md"] == "v2")
        #expect(try texts(of: item)["body.md"] == "v3")
        // Refused once, the exchange is not tried again by this store.
        #expect(faults.trace.filter { $0.call == .exchange }.count <= 2, "\(faults.trace.filter { $0.call == .exchange })")
        #expect(try Self.hiddenEntries(library).isEmpty)
    }

    @Test func aStoreOfFormat3IsMarkedFormat4BeforeItsFirstExchange() throws {
        let library = try VersionLibrary()
        let item = try Self.makeNote(library)
        let store = library.store()
        try store.addVersion(ofItemAt: item)
        let description = library.storeURL.appendingPathComponent("store.json")
        try Data("{\n  \"format\" : \"org.documentkit.version-store\",\n  \"version\" : 3\n}\n".utf8).write(to: description)
        try library.store().save(Self.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, keepingReplacedAs: .save)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: description)) as? [String: Any]
        #expect(object?["version"] as? Int == 4)
    }

    @Test func everyFailingCallOfASaveByExchangeLeavesTheDocumentAndEveryVersionWhole() throws {
        func makeLibrary() throws -> (VersionLibrary, URL, FileWrapper) {
            let library = try VersionLibrary()
            let item = try Self.makeNote(library, members: ["body.md": "v1", "attachments/a.txt": "A"])
            var tree = try Self.tree(["body.md": "v2", "attachments/a.txt": "A"])
            tree["attachments"] = try FileWrapper(contentsOf: item)["attachments"]
            tree = try library.store().save(tree, to: item, keepingReplacedAs: .save).saved
            var next = try Self.tree(["body.md": "v3", "attachments/a.txt": "A"])
            next["attachments"] = tree["attachments"]
            return (library, item, next)
        }
        // A save that could not name its version leaves it for the listing to complete: kept may be nil.
        try checkEveryFailingCallOfAVersionedSave(makeLibrary, requiringKeptVersion: false) { call, library, item, listing in
            let live = try inode(item.appendingPathComponent("attachments/a.txt").path)
            for version in listing.others {
                #expect(try inode(version.url.appendingPathComponent("attachments/a.txt").path) != live, "\(call): a version shares a file with the document")
            }
            #expect(try Self.hiddenEntries(library).isEmpty, "\(call)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: library.url.path).sorted() == [VersionStore.folderName, "trip.note"], "\(call)")
        }
        // Such a save goes through the exchange (else this tests the copy): the version has the replaced body's file.
        let (library, item, tree) = try makeLibrary()
        let replaced = try inode(item.appendingPathComponent("body.md").path)
        let kept = try #require(try library.store().save(tree, to: item, keepingReplacedAs: .save).kept)
        #expect(try inode(kept.url.appendingPathComponent("body.md").path) == replaced, "the save did not exchange")
    }
}

/// SHA-256 in hexadecimal, as version ids take it.
enum VersionLibraryDigest {
    static func sha256(_ data: Data) -> String {
        data.withUnsafeBytes { MemberHasher.sha256(of: $0) }
    }
}
