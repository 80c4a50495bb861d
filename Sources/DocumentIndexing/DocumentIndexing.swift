// DocumentIndexing: the live, persisted index of a library of documents (`DocumentIndex`) and
// the per-machine cache of member digests. Both are caches kept in the user's cache folder
// (SQLite through GRDB), never the truth: whatever they hold is validated against the files.
import GRDB

/// Facts about the DocumentIndexing layer, for diagnostics.
package enum DocumentIndexing {
    /// The version of the SQLite library the caches use.
    package static func sqliteVersion() throws -> String {
        try DatabaseQueue().read { try String.fetchOne($0, sql: "SELECT sqlite_version()") ?? "" }
    }
}
