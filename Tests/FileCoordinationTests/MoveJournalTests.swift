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
    @Test("recording a move removes records over an hour old, records of an earlier boot and dead writers' temporary files")
    func recordingPrunesStaleRecords() throws {
        let folder = try TemporaryDirectory(prefix: "dk-moves")
        let journal = MoveJournal(folder: folder.url.path)
        let now = MoveJournal.now()
        func write(_ name: String, _ time: UInt64) throws {
            try Data("\(time)\n/somewhere/\(name)".utf8).write(to: folder.appending(name))
        }
        try write("a1", now - 2 * MoveJournal.retention)  // stale
        try write("b2", now + 1_000_000_000_000_000)  // from before a reboot
        try write("c3", now - 1_000_000_000)  // a second ago: kept
        try Data("half".utf8).write(to: folder.appending("d4.123.tmp"))
        var times = [timespec(tv_sec: time(nil) - 600, tv_nsec: 0), timespec(tv_sec: time(nil) - 600, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, folder.appending("d4.123.tmp").path, &times, 0) == 0)
        try Data("live".utf8).write(to: folder.appending("e5.456.tmp"))  // being written now: kept

        journal.record(0xf6, movedTo: "/new/place")

        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(left == ["c3", "e5.456.tmp", "f6"])
        #expect(journal.destination(of: 0xf6, since: now) == "/new/place")
    }

    @Test("a record with a time ahead of the clock (an earlier boot) is not followed")
    func recordOfAnEarlierBootIsIgnored() throws {
        let folder = try TemporaryDirectory(prefix: "dk-moves")
        let journal = MoveJournal(folder: folder.url.path)
        try Data("\(MoveJournal.now() + 1_000_000_000_000_000)\n/elsewhere".utf8).write(to: folder.appending("2a"))
        #expect(journal.destination(of: 0x2a, since: 0) == nil)
    }
}
