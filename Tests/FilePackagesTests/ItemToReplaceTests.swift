#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@testable import FilePackages

/// `SaveOptions.itemToReplace`: a save replaces the item it names, or nothing: never re-creates
/// an item moved away meanwhile (a shell's `mv`), never replaces another one put in its place.
@Suite struct ItemToReplaceTests {
    static func package(_ text: String) -> FileWrapper {
        FileWrapper(directoryWithFileWrappers: ["body.txt": FileWrapper(regularFileWithContents: Data(text.utf8))])
    }

    static func identity(_ url: URL) throws -> FileIdentity {
        FileIdentity(try FileSystem.live.status(of: url.path, in: AT_FDCWD))
    }

    /// The non-hidden names in `folder`, sorted.
    static func visibleNames(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// A package `Note.pkg` saved, its identity read, then moved to `Away.pkg` (as a shell's `mv`).
    static func packageMovedAway() throws -> (TemporaryDirectory, URL, FileIdentity) {
        let dir = try TemporaryDirectory()
        let place = dir.appending("Note.pkg")
        try package("one").write(to: place)
        let read = try identity(place)
        try FileManager.default.moveItem(at: place, to: dir.appending("Away.pkg"))
        return (dir, place, read)
    }

    @Test("a save of an item moved away fails with notFound and writes nothing at its old place")
    func movedAwayItemIsNotWrittenAgain() throws {
        let (dir, place, read) = try Self.packageMovedAway()
        let before = snapshot(dir.appending("Away.pkg"))

        do {
            try Self.package("two").write(to: place, options: SaveOptions(itemToReplace: read))
            Issue.record("the save wrote the item again")
        } catch {
            #expect(error.code == .notFound && error.originalIsIntact == true, "\(error)")
            #expect(error.description.contains(place.path) && error.description.contains("moved away"), "\(error)")
        }
        #expect(try Self.visibleNames(dir.url) == ["Away.pkg"], "nothing is made at the old place")
        #expect(snapshot(dir.appending("Away.pkg")) == before)
        // Without the option, a save makes the item, as before.
        try Self.package("two").write(to: place)
        #expect(try Self.visibleNames(dir.url) == ["Away.pkg", "Note.pkg"])
    }

    @Test("a save whose item was replaced by another fails with changedSinceRead and leaves the other untouched")
    func anotherItemInItsPlaceIsNotReplaced() throws {
        let (dir, place, read) = try Self.packageMovedAway()
        try Self.package("another").write(to: place)
        let other = snapshot(place)

        do {
            try Self.package("two").write(to: place, options: SaveOptions(itemToReplace: read))
            Issue.record("the save replaced another item")
        } catch {
            #expect(error.code == .changedSinceRead && error.originalIsIntact == true, "\(error)")
        }
        #expect(snapshot(place) == other)
        #expect(try Self.visibleNames(dir.url) == ["Away.pkg", "Note.pkg"])
        // The item it names, wherever it was, is replaced when it is back.
        try FileManager.default.removeItem(at: place)
        try FileManager.default.moveItem(at: dir.appending("Away.pkg"), to: place)
        try Self.package("two").write(to: place, options: SaveOptions(itemToReplace: read))
        #expect(snapshot(place)["body.txt"] == .file(Data("two".utf8)))
    }

    @Test("an item put in its place as the save swaps is never replaced, and the save fails", arguments: [false, true])
    func itemReplacedJustBeforeTheSwapIsSwappedBack(isFile: Bool) throws {
        let dir = try TemporaryDirectory()
        let place = dir.appending(isFile ? "Note.txt" : "Note.pkg")
        let first = isFile ? FileWrapper(regularFileWithContents: Data("one".utf8)) : Self.package("one")
        let second = isFile ? FileWrapper(regularFileWithContents: Data("two".utf8)) : Self.package("two")
        try first.write(to: place)
        let read = try Self.identity(place)
        // Another program moves the item away and puts its own there as the save swaps (a
        // package: just before the exchange, swapped back after it) or as it flushes the new
        // file (a file: found by the check just before the exchange).
        let acted = Mutex(false)
        let trigger: SystemCall = isFile ? .synchronize : .exchange
        let fileSystem = FileSystem(interceptor: { call, _ in
            guard call == trigger, !acted.withLock({ $0 }) else { return nil }
            acted.withLock { $0 = true }
            rename(place.path, dir.appending("Away").path)
            _ = FileManager.default.createFile(atPath: dir.appending("theirs").path, contents: Data("theirs".utf8))
            if !isFile { mkdir(place.path, 0o755) }
            rename(dir.appending("theirs").path, isFile ? place.path : place.appendingPathComponent("theirs").path)
            return nil
        })
        let theirs = { snapshot(place) }
        do {
            try second.write(to: place, options: SaveOptions(fileSystem: fileSystem, itemToReplace: read))
            Issue.record("the save replaced another item")
        } catch {
            #expect(error.code == .changedSinceRead && error.originalIsIntact == true, "\(error)")
        }
        #expect(acted.withLock { $0 }, "the swap was reached")
        let now = theirs()
        #expect(now[isFile ? "" : "theirs"] == .file(Data("theirs".utf8)), "the other program's item is in place: \(now)")
        #expect(try Self.visibleNames(dir.url) == ["Away", isFile ? "Note.txt" : "Note.pkg"], "nothing else is left")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }.isEmpty, "no temporary item is left")
    }
}
