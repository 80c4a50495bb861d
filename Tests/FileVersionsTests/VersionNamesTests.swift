@testable import FileVersions
import Foundation
import Testing

/// `VersionNames`: what pruning takes from one pass over a document folder's names, instead of a
/// copy of them (issue #16: a save of a note with thousands of versions).
@Suite("Version names")
struct VersionNamesTests {
    @Test("only version ids are counted; the oldest is the least id, and its date the one pruning gets")
    func countsIdsAndFindsTheOldest() throws {
        let older = VersionIdentifier.make(date: Date(timeIntervalSince1970: 1_700_000_000), digest: nil)
        let newer = VersionIdentifier.make(date: Date(timeIntervalSince1970: 1_800_000_000), digest: nil)
        let names = VersionNames([newer, ".new-abcdefghijkl", older, older + ".state-20261201T101500123Z", "notes.txt"])
        #expect(names.count == 2)
        #expect(names.oldest == older)
        #expect(names.oldestDate.map { Int($0.timeIntervalSince1970) } == 1_700_000_000)
        let more = names.adding(VersionIdentifier.make(date: Date(timeIntervalSince1970: 1_600_000_000), digest: nil))
        #expect(more.count == 3 && names.count == 2)
        #expect(more.oldestDate.map { Int($0.timeIntervalSince1970) } == 1_600_000_000)
        #expect(VersionNames().oldestDate == nil && VersionNames().count == 0)
    }

    @Test("where the least id's date can't be read, decoding every id finds the oldest that can")
    func anUnreadableLeastDateFallsBackToEveryId() throws {
        let readable = VersionIdentifier.make(date: Date(timeIntervalSince1970: 1_700_000_000), digest: nil)
        // Month 00: the shape of an id, not a date.
        let unreadable = "20200001T000000Z-" + String(readable.suffix(16))
        try #require(VersionIdentifier.isValid(unreadable) && VersionIdentifier.date(of: unreadable) == nil)
        let names = VersionNames([readable, unreadable])
        #expect(names.count == 2 && names.oldest == unreadable && names.oldestDate == nil)
        let decoded = VersionNames([readable, unreadable], decodingEvery: true)
        #expect(decoded.oldestDate.map { Int($0.timeIntervalSince1970) } == 1_700_000_000)
    }
}
