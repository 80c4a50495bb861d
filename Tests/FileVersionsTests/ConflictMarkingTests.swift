import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Issue #12 §3: a state kept as a conflict is always an unresolved conflict version, even when
/// the store already held it as an ordinary one.
@Suite struct ConflictMarkingTests {
    @Test("keeping as a conflict a state the store holds as an ordinary version makes that version an unresolved conflict")
    func ordinaryVersionBecomesAConflict() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("a.txt")
        try Data("theirs".utf8).write(to: item)
        let ordinary = try store.addVersion(ofItemAt: item, origin: .save)
        #expect(!ordinary.isConflict)
        let kept = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(kept.persistentIdentifier == ordinary.persistentIdentifier)
        #expect(kept.isConflict && kept.isUnresolvedConflict)
        let listing = try store.versions(ofItemAt: item)
        #expect(listing.others.count == 1)
        #expect(listing.unresolvedConflicts.map(\.persistentIdentifier) == [ordinary.persistentIdentifier])
    }

    @Test("a conflict already kept is returned as it is, resolved or not")
    func keptConflictIsReturnedAsItIs() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("b.txt")
        try Data("theirs".utf8).write(to: item)
        let first = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        let again = try store.keepConflictingVersion(ofItemAt: item, ancestorDigest: nil)
        #expect(first.persistentIdentifier == again.persistentIdentifier && again.isUnresolvedConflict)
    }
}
