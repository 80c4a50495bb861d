@testable import DocumentIndexing
import Testing

@Suite("SQLite availability")
struct SQLiteAvailabilityTests {
    @Test("the caches' SQLite is version 3")
    func sqliteIsVersion3() throws {
        #expect((try DocumentIndexing.sqliteVersion()).hasPrefix("3."))
    }
}
