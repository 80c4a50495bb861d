import DocumentKit
import Foundation

extension DocumentIndex.Configuration {
    /// The entries a fresh scan of the library finds: a new index with a throw-away cache folder
    /// of its own, refreshed. What a test compares a live or persisted index with.
    public func freshScan() async throws -> [IndexEntry] {
        let cache = try TemporaryDirectory(prefix: "index-fresh-cache")
        var fresh = self
        fresh.cacheFolder = cache.url
        let index = try DocumentIndex(fresh)
        try await index.refresh()
        let entries = await index.entries
        await index.close()
        return entries
    }
}
