import Foundation
import GRDB
import Testing

@testable import DocumentIndexing

/// SQLite's page cache of the index is bounded (256 KiB, not SQLite's 2 MiB): a long-running
/// process must not grow with its index files.
@Suite struct PageCacheLimitTests {
    @Test("an index database's connection keeps at most 256 KiB of pages in memory")
    func indexDatabaseLimitsItsPageCache() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("page-cache-\(UUID().uuidString).sqlite").path
        defer { IndexDatabase.remove(at: path) }
        let identity = IndexDatabase.Identity(
            library: .init(realPath: "/library", device: 2049, inode: 2), configuration: "note\u{1}Info.json")
        let database = try IndexDatabase(path: path, identity: identity)
        let size = try database.queue.read { try Int.fetchOne($0, sql: "PRAGMA cache_size") }
        #expect(size == -Configuration.pageCacheKibibytes)
        #expect(Configuration.pageCacheKibibytes == 256)
    }
}
