#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where coordinated moves are recorded, so that a coordination that waited for a mover learns
/// where the item went (`FileCoordinator.item(at:didMoveTo:)`).
///
/// One small file per moved unit, `moves/<unit>`, holding the time of the move (CLOCK_MONOTONIC
/// nanoseconds, one clock for every process of the machine) and the new path; written beside
/// and renamed into place, so never read half-written. A later move of the same unit replaces it.
/// Specified in `Formats/coordination-locks/`.
struct MoveJournal: Sendable {
    let folder: String
    /// The clock records are written and judged by: ``now()``; tests give a fixed one.
    let clock: @Sendable () -> UInt64
    /// The modes of the folder and the records.
    let modes: NamespaceModes

    init(folder: String, modes: NamespaceModes = NamespaceModes(sharedByGroup: false), clock: @escaping @Sendable () -> UInt64 = MoveJournal.now) {
        self.folder = folder
        self.modes = modes
        self.clock = clock
    }

    /// CLOCK_MONOTONIC in nanoseconds: time since boot, so small on a machine booted minutes ago.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func path(_ unit: Int64) -> String { folder + "/" + String(UInt64(bitPattern: unit), radix: 16) }

    /// Records that the unit moved to `newPath` now.
    func record(_ unit: Int64, movedTo newPath: String) {
        modes.makeFolder(folder)
        let target = path(unit)
        let temporary = target + ".\(getpid()).tmp"
        let text = "\(clock())\n\(newPath)"
        guard (try? Data(text.utf8).write(to: URL(fileURLWithPath: temporary))) != nil else { return }
        modes.setFileMode(temporary)  // readable by the group's other users in a shared namespace
        rename(temporary, target)
        prune()
    }

    /// How long a record is kept: a coordination that waits longer than this behind other holders
    /// after the move no longer follows it (it finds the item gone, as after a deletion).
    static let retention: UInt64 = 3_600 * 1_000_000_000

    /// Removes records older than ``retention``, records from an earlier boot (a time ahead of the
    /// clock) and temporary files of writers that died, so the folder does not grow without bound.
    func prune() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let now = clock()
        for name in names {
            let entry = folder + "/" + name
            if name.hasSuffix(".tmp") {
                var status = stat()
                if stat(entry, &status) == 0, Glibc.time(nil) - status.st_mtim.tv_sec > 60 { unlink(entry) }
                continue
            }
            guard let time = Self.recordedTime(of: entry) else { continue }
            if Self.isStale(recordedAt: time, now: now) { unlink(entry) }
        }
    }

    /// Whether a record written at `time` is to be removed at `now`: it is from an earlier boot
    /// (ahead of the clock), or older than ``retention``. Nothing is subtracted below zero: on a
    /// clock younger than the retention (a machine booted less than an hour ago), no record of
    /// this boot is old enough.
    static func isStale(recordedAt time: UInt64, now: UInt64) -> Bool {
        time > now || now - time > retention
    }

    private static func recordedTime(of entry: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: entry, encoding: .utf8) else { return nil }
        return text.split(separator: "\n", maxSplits: 1).first.flatMap { UInt64($0) }
    }

    /// Where the unit went, if it moved at or after `since`.
    func destination(of unit: Int64, since: UInt64) -> String? {
        guard let text = try? String(contentsOfFile: path(unit), encoding: .utf8) else { return nil }
        let parts = text.split(separator: "\n", maxSplits: 1)
        // A time ahead of the clock is from before a reboot: not about anyone waiting now.
        guard parts.count == 2, let time = UInt64(parts[0]), time >= since, time <= clock() else { return nil }
        return String(parts[1])
    }
}
