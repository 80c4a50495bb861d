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

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func path(_ unit: Int64) -> String { folder + "/" + String(UInt64(bitPattern: unit), radix: 16) }

    /// Records that the unit moved to `newPath` now.
    func record(_ unit: Int64, movedTo newPath: String) {
        mkdir(folder, 0o700)
        let target = path(unit)
        let temporary = target + ".\(getpid()).tmp"
        let text = "\(Self.now())\n\(newPath)"
        guard (try? Data(text.utf8).write(to: URL(fileURLWithPath: temporary))) != nil else { return }
        rename(temporary, target)
    }

    /// Where the unit went, if it moved at or after `since`.
    func destination(of unit: Int64, since: UInt64) -> String? {
        guard let text = try? String(contentsOfFile: path(unit), encoding: .utf8) else { return nil }
        let parts = text.split(separator: "\n", maxSplits: 1)
        guard parts.count == 2, let time = UInt64(parts[0]), time >= since else { return nil }
        return String(parts[1])
    }
}
