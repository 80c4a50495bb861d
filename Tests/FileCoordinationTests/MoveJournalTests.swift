#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation
import Testing

@testable import FileCoordination

/// The move journal (`Formats/coordination-locks/v1`, Moves) stays small and never sends a
/// waiting coordination after a move of an earlier boot.
@Suite struct MoveJournalTests {
    /// Writes a record of `name` moved at `time` (the clock's nanoseconds).
    static func write(_ name: String, at time: UInt64, in folder: TemporaryDirectory) throws {
        try Data("\(time)\n/somewhere/\(name)".utf8).write(to: folder.appending(name))
    }

    @Test("recording a move removes records over an hour old, records of an earlier boot and dead writers' temporary files")
    func recordingPrunesStaleRecords() throws {
        let folder = try TemporaryDirectory(prefix: "dk-moves")
        // A machine up three hours: whatever the clock of the machine running the test says.
        let now = 3 * MoveJournal.retention
        let journal = MoveJournal(folder: folder.url.path, clock: { now })
        try Self.write("a1", at: now - 2 * MoveJournal.retention, in: folder)  // stale
        try Self.write("a2", at: now - MoveJournal.retention - 1, in: folder)  // just over the retention: stale
        try Self.write("b2", at: now + 1_000_000_000_000_000, in: folder)  // from before a reboot
        try Self.write("c3", at: now - 1_000_000_000, in: folder)  // a second ago: kept
        try Self.write("c4", at: now - MoveJournal.retention, in: folder)  // exactly the retention: kept
        try Data("half".utf8).write(to: folder.appending("d4.123.tmp"))
        var times = [timespec(tv_sec: time(nil) - 600, tv_nsec: 0), timespec(tv_sec: time(nil) - 600, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, folder.appending("d4.123.tmp").path, &times, 0) == 0)
        try Data("live".utf8).write(to: folder.appending("e5.456.tmp"))  // being written now: kept

        journal.record(0xf6, movedTo: "/new/place")

        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(left == ["c3", "c4", "e5.456.tmp", "f6"])
        #expect(journal.destination(of: 0xf6, since: now) == "/new/place")
    }

    @Test("on a machine booted less than an hour ago, recording a move keeps every record of this boot and removes those ahead of the clock")
    func youngClockKeepsThisBootsRecords() throws {
        let folder = try TemporaryDirectory(prefix: "dk-moves")
        // Booted a minute ago: the clock reads less than the retention (and less than twice it).
        let now: UInt64 = 60_000_000_000
        let journal = MoveJournal(folder: folder.url.path, clock: { now })
        try Self.write("a1", at: 0, in: folder)  // at boot
        try Self.write("a2", at: now - 1_000_000_000, in: folder)  // a second ago
        try Self.write("b2", at: now + MoveJournal.retention, in: folder)  // from before a reboot

        journal.record(0xf6, movedTo: "/new/place")

        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(left == ["a1", "a2", "f6"])
        #expect(journal.destination(of: 0xa1, since: 0) == "/somewhere/a1")
        #expect(journal.destination(of: 0xf6, since: now) == "/new/place")
    }

    @Test("a record is stale when it is ahead of the clock or older than the retention, at any clock reading")
    func stalenessAtAnyClockReading() {
        let retention = MoveJournal.retention
        for now in [0, 1, 60_000_000_000, retention - 1, retention, retention + 1, 2 * retention, UInt64.max] {
            #expect(!MoveJournal.isStale(recordedAt: now, now: now), "now \(now)")
            #expect(MoveJournal.isStale(recordedAt: 0, now: now) == (now > retention), "boot time, now \(now)")
            if now < UInt64.max { #expect(MoveJournal.isStale(recordedAt: now + 1, now: now), "ahead, now \(now)") }
            if now > retention { #expect(MoveJournal.isStale(recordedAt: now - retention - 1, now: now), "now \(now)") }
        }
    }

    @Test("a record with a time ahead of the clock (an earlier boot) is not followed")
    func recordOfAnEarlierBootIsIgnored() throws {
        let folder = try TemporaryDirectory(prefix: "dk-moves")
        let journal = MoveJournal(folder: folder.url.path)
        try Data("\(MoveJournal.now() + 1_000_000_000_000_000)\n/elsewhere".utf8).write(to: folder.appending("2a"))
        #expect(journal.destination(of: 0x2a, since: 0) == nil)
    }
}
