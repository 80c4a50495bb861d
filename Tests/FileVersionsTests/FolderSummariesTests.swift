import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

/// A save's look for leftovers in a document folder that `WatchedFolderNames` keeps follows the
/// names changed since the last look (issue #16: every save passed over every version's name).
@Suite("Folder summaries")
struct FolderSummariesTests {
    /// What a listing of `folder` gives a save: the versions' number and least id.
    func listed(_ folder: URL) throws -> VersionNames {
        VersionNames(try FileManager.default.contentsOfDirectory(atPath: folder.path))
    }

    @Test("packed version ids give back their names and sort as their text")
    func packedIdentifiersSortAsText() throws {
        var random = SeededRandom(seed: 16)
        var ids: [String] = []
        for _ in 0..<200 {
            let date = Date(timeIntervalSince1970: Double(random.next() % 2_000_000_000))
            let digits = String(format: "%016llx", random.next())
            ids.append(VersionIdentifier.timestamp(date) + "-" + digits)
        }
        let packed = try ids.map { try #require(VersionIdentifier.Packed($0), "\($0)") }
        #expect(packed.map(\.name) == ids)
        #expect(packed.sorted().map(\.name) == ids.sorted())
    }

    @Test("a save's look at a watched folder finds what a listing finds, as versions come and go, and still cleans an entry a killed process left")
    func lookFollowsTheFolder() throws {
        let library = try VersionLibrary()
        let item = library.item("w.txt")
        try library.writeFile("w.txt", "current")
        let store = library.store()
        var versions: [FileVersion] = []
        versions += try library.addVersions(of: item, to: store, 0..<5)
        let folder = try #require(library.documentFolders().first)
        // The first look lists (a folder asked for once is not watched), the second watches it.
        for _ in 0..<3 { #expect(store.removeAbandonedEntries(in: folder) == (try listed(folder))) }
        let kept = store.folderSummaries.look(atFolder: folder.path, using: store.fileSystem)
        #expect(kept?.versions == (try listed(folder)) && kept?.hasOthers == false, "not watched: \(String(describing: kept))")

        for index in 5..<9 {
            let source = try library.writeFile("source.txt", "version \(index)")
            versions.append(try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true))
            #expect(store.removeAbandonedEntries(in: folder) == (try listed(folder)))
        }
        #expect(try listed(folder).count == 9)
        // The oldest removed: the next oldest is the least id.
        let oldest = try #require(versions.min { $0.persistentIdentifier < $1.persistentIdentifier })
        try store.remove(oldest)
        let after = try listed(folder)
        #expect(after.count == 8 && after.oldest != oldest.persistentIdentifier)
        #expect(store.removeAbandonedEntries(in: folder) == after)

        // An entry a killed process left (no record): the look sees it and the save cleans it.
        let left = folder.appendingPathComponent(".new-killedsave01")
        try FileManager.default.createDirectory(at: left.appendingPathComponent("item"), withIntermediateDirectories: true)
        #expect(store.removeAbandonedEntries(in: folder) == after)
        #expect(!FileManager.default.fileExists(atPath: left.path))
        #expect(store.folderSummaries.look(atFolder: folder.path, using: store.fileSystem)?.hasOthers == false)
        #expect(store.removeAbandonedEntries(in: folder) == after)
    }

    @Test("the summaries stay bounded")
    func summariesAreBounded() throws {
        let library = try VersionLibrary()
        let summaries = FolderSummaries(generationLimit: 2)
        var folders: [URL] = []
        for index in 0..<6 {
            let folder = library.url.appendingPathComponent("folder-\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            folders.append(folder)
            // Asked twice: watched, then summarized.
            for _ in 0..<2 { _ = summaries.look(atFolder: folder.path, using: .live) }
            #expect(summaries.count <= 4)
        }
    }
}
