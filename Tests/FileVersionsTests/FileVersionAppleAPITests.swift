import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Issue #13 §5: `NSFileVersion`'s settable `isResolved` and `hasLocalContents`.
@Suite struct FileVersionAppleAPITests {
    @Test("setting isResolved to true records the resolution in the store, as NSFileVersion does")
    func settingIsResolvedMarksTheConflictResolved() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("a.txt")
        try Data("theirs".utf8).write(to: item)
        var conflict = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(!conflict.isResolved)

        conflict.isResolved = true

        #expect(conflict.isResolved && conflict.resolution == .keptCurrent)
        #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: item).isEmpty)
        let stored = try #require(try store.otherVersions(ofItemAt: item).first)
        #expect(stored.isConflict && stored.isResolved)
    }

    @Test("setting isResolved to false does not make a resolved conflict unresolved")
    func settingIsResolvedToFalseChangesNothing() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("b.txt")
        try Data("theirs".utf8).write(to: item)
        var conflict = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        conflict.isResolved = true
        conflict.isResolved = false
        #expect(conflict.isResolved)
        #expect(try store.unresolvedConflictVersions(ofItemAt: item).isEmpty)
    }

    @Test("hasLocalContents is true for kept versions and false once a version's contents are gone")
    func hasLocalContentsSaysWhetherTheContentsAreThere() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("c.txt")
        try Data("one".utf8).write(to: item)
        let kept = try store.addVersion(ofItemAt: item, origin: .save)
        #expect(kept.hasLocalContents)
        #expect(try #require(store.currentVersion(ofItemAt: item)).hasLocalContents)

        try FileManager.default.removeItem(at: kept.url)
        #expect(!kept.hasLocalContents)
    }
}
