import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

/// `newestVersion(ofItemAt:)` reads only the entries of the newest second, and gives what a
/// whole listing gives first.
@Suite struct NewestVersionTests {
    @Test func theNewestVersionIsTheFirstOfTheWholeListingAcrossSecondsAndWithinOne() throws {
        let library = try VersionLibrary()
        let item = library.item("a.txt")
        try library.writeFile("a.txt", "current")
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll)
        #expect(try store.newestVersion(ofItemAt: item) == nil)
        for (index, seconds) in [1_000.0, 5_000.0, 5_000.25, 3_000.0, 5_000.75, 4_999.9].enumerated() {
            let source = try library.writeFile("source.txt", "version \(index)")
            let date = Date(timeIntervalSince1970: 1_790_000_000 + seconds)
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: source.path)
            try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true)
            let newest = try store.newestVersion(ofItemAt: item)
            #expect(newest?.persistentIdentifier == (try store.otherVersions(ofItemAt: item).first?.persistentIdentifier))
        }
        #expect(try store.newestVersion(ofItemAt: item).map { try String(contentsOf: $0.url, encoding: .utf8) } == "version 4")
    }

    @Test func whenTheNewestSecondsEntriesCantBeReadTheNextNewestIsGiven() throws {
        let library = try VersionLibrary()
        let item = library.item("b.txt")
        try library.writeFile("b.txt", "current")
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll)
        var kept: [FileVersion] = []
        for (index, seconds) in [(0, 10.0), (1, 20.0)] {
            let source = try library.writeFile("source.txt", "version \(index)")
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_790_000_000 + seconds)], ofItemAtPath: source.path)
            kept.append(try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true))
        }
        // The newest one's record is damaged: it is no version; the older one is the newest.
        try Data("not json".utf8).write(to: kept[1].url.deletingLastPathComponent().appendingPathComponent("record.json"))
        #expect(try store.newestVersion(ofItemAt: item)?.persistentIdentifier == kept[0].persistentIdentifier)
        #expect(try store.otherVersions(ofItemAt: item).first?.persistentIdentifier == kept[0].persistentIdentifier)
    }
}
