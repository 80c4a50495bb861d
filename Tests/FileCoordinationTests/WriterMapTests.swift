import Testing

@testable import FileCoordination

/// The watcher's map of files being written (path → when the writing began, in uptime
/// nanoseconds) forgets writers that never closed, on any clock reading.
@Suite struct WriterMapTests {
    @Test("writers that began 10 s or more ago are forgotten, later ones kept")
    func oldWritersAreForgotten() {
        let now: UInt64 = 7_200_000_000_000
        let writing = ["old": now - 10_000_000_000, "older": 0, "recent": now - 9_999_999_999, "now": now]
        #expect(FileWatcher.recentWriters(writing, now: now) == ["recent": now - 9_999_999_999, "now": now])
    }

    @Test("on a clock younger than 10 s (a machine just booted) every writer is recent, and nothing traps")
    func youngClockKeepsEveryWriter() {
        let writing: [String: UInt64] = ["at boot": 0, "just now": 2_000_000_000, "ahead": 9_000_000_000]
        #expect(FileWatcher.recentWriters(writing, now: 3_000_000_000) == writing)
    }
}
