import Foundation
import Testing

@testable import notes

/// The event feed's journal (``EventJournal``): a ring of fixed slots that keeps the last events
/// for clients that reconnect, each id and tag kept without an allocation of its own.
@Suite("notes serve: the event journal")
struct EventJournalTests {
    @Test func idsAndTagsComeBackAsTheyWereWhateverTheirForm() {
        let digest = "\"" + String(repeating: "0123456789abcdef", count: 4) + "\""
        let texts = [
            UUID().uuidString, UUID().uuidString.lowercased(), digest, digest.uppercased(),
            "\"" + String(repeating: "0", count: 64) + "\"", "\"short\"", "", "not-a-uuid",
        ]
        for text in texts { #expect(EventJournal.Text(text).string == text) }
        // The canonical forms are kept compactly; the others as they are.
        #expect(EventJournal.Text(texts[0]) == .uuid(UUID(uuidString: texts[0])!))
        if case .other = EventJournal.Text(texts[1]) {} else { Issue.record("a lower-case UUID must be kept as text") }
        if case .digest = EventJournal.Text(digest) {} else { Issue.record("a quoted SHA-256 must be kept as a digest") }
        if case .other = EventJournal.Text(texts[3]) {} else { Issue.record("an upper-case digest must be kept as text") }
    }

    @Test func afterWrappingItKeepsExactlyTheLastEventsInOrder() {
        var journal = EventJournal(capacity: 5)
        #expect(journal.first == nil && journal.events(after: 0).isEmpty)
        for sequence in UInt64(1)...12 {
            journal.append(EventHub.Event(sequence: sequence, kind: .changed, id: "id-\(sequence)", title: nil, etag: nil, conflicts: nil))
        }
        #expect(journal.count == 5)
        #expect(journal.first?.sequence == 8)
        #expect(journal.events(after: 0).map(\.sequence) == [8, 9, 10, 11, 12])
        #expect(journal.events(after: 10).map(\.id) == ["id-11", "id-12"])
        #expect(journal.events(after: 12).isEmpty)
    }

    @Test func aClientBehindTheJournalIsResetAndOneWithinItGetsWhatItMissed() async {
        let hub = EventHub(capacity: 3)
        let etag = "\"" + String(repeating: "ab", count: 32) + "\""
        let id = UUID().uuidString
        for index in 0..<5 {
            await hub.publish(.changed, id: "\(id)-\(index)", title: "Note \(index)", etag: etag, conflicts: index)
        }
        let epoch = hub.epoch
        let (behind, start, _) = await hub.subscribe(after: "\(epoch):1")
        if case .reset = start {} else { Issue.record("a client that missed forgotten events must be reset") }
        let (within, replay, _) = await hub.subscribe(after: "\(epoch):2")
        guard case .replay(let missed) = replay else {
            Issue.record("a client within the journal must get what it missed")
            return
        }
        #expect(missed.map(\.sequence) == [3, 4, 5])
        #expect(missed.map(\.id) == (2..<5).map { "\(id)-\($0)" })
        #expect(missed.allSatisfy { $0.etag == etag })
        #expect(missed.map(\.conflicts) == [2, 3, 4])
        await hub.unsubscribe(behind)
        await hub.unsubscribe(within)
    }
}
