import GRDB

extension Configuration {
    /// Pages of a database SQLite keeps in memory per connection: 256 KiB (its default is 2 MiB).
    /// The index and the member digest cache are read through the kernel's page cache anyway, and
    /// a long-running process should not grow by 2 MiB per connection as the files grow.
    static let pageCacheKibibytes = 256

    /// Limits the connection's page cache to ``pageCacheKibibytes``.
    mutating func limitPageCache() {
        prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(Configuration.pageCacheKibibytes)") }
    }
}
