import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Testing

/// What a versioned save costs in listings of the document's folder in the store.
@Suite("Versioned save: listings")
struct SaveListingTests {
    @Test("a versioned save lists its document's folder in the store once, whatever the number of versions", arguments: [3, 60])
    func aSaveListsTheDocumentsFolderOnce(versions: Int) throws {
        let library = try VersionLibrary()
        let item = try library.writeFile("b.txt", "current")
        let faults = FaultInjector()
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, fileSystem: faults.fileSystem)
        for index in 0..<versions {
            try store.save(FileWrapper(regularFileWithContents: Data("saved \(index)".utf8)), to: item, keepingReplacedAs: .save)
        }
        let folder = try #require(library.documentFolders().first)
        faults.reset()
        try store.save(FileWrapper(regularFileWithContents: Data("saved once more".utf8)), to: item, keepingReplacedAs: .save)
        let listings = faults.trace.filter { $0.call == .listDirectory && $0.name.hasPrefix(folder.path) }
        #expect(listings.count == 1, "\(listings)")
        #expect(try store.versions(ofItemAt: item).others.count == versions + 1)
    }
}
