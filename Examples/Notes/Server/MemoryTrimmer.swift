import CDocumentKitShims
import Foundation
import ServiceLifecycle

/// Gives the memory the server freed back to the system every few seconds (`malloc_trim`).
///
/// glibc keeps what a thread frees in that thread's arena for its next allocations; a server's
/// requests run on many threads (NIO's, Swift's pool, DocumentKit's I/O threads), so freed
/// memory piles up in a dozen arenas and stays resident although nothing uses it: in the soak,
/// half of what malloc held. Trimming costs a walk of the arenas, well under a millisecond here.
struct MemoryTrimmer: Service {
    /// How often the server trims.
    let interval: Duration

    /// Caps glibc's malloc arenas at `count` (`mallopt(M_ARENA_MAX)`, as `MALLOC_ARENA_MAX` does),
    /// before the server's threads start: otherwise each new thread that allocates may get an
    /// arena of its own (up to eight per core), and the memory each arena keeps (live objects
    /// scattered through it, which no trim gives back) grows with every thread the load brings.
    /// Call it first thing; a `MALLOC_ARENA_MAX` in the environment wins.
    static func limitArenas(to count: Int32 = 2) {
        guard ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil else { return }
        _ = mallopt(M_ARENA_MAX, count)
    }

    func run() async throws {
        // Ends at once on shutdown (the sleep is cancelled), so that SIGTERM waits for nothing here.
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                _ = malloc_trim(0)
            }
        }
    }
}
