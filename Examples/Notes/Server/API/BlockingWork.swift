import NIOPosix

/// The server's own threads for the blocking calls of a request that may take long on a slow
/// disk (an upload's writes and `fsync`, keeping a deleted note as a version, reading a
/// note's versions): never on Swift's cooperative pool, whose few threads every request shares.
/// DocumentKit's own reads and saves run on its I/O threads already.
enum BlockingWork {
    /// Eight threads, started on first use.
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        return pool
    }()

    /// Runs `body` on one of the pool's threads and returns what it gives.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }
}
