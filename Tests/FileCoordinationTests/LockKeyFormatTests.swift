import Foundation
import Testing

@testable import FileCoordination

/// The lock keys of `Formats/coordination-locks/v1` never change: processes of different
/// versions sharing a namespace must meet on the same bytes.
@Suite struct LockKeyFormatTests {
    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/coordination-locks/v1/fixtures/keys.tsv")

    @Test("keys and item offsets match the frozen version 1 fixture")
    func keysMatchFixture() throws {
        let rows = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(rows.count == 5)
        for row in rows {
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let component = ItemPath.Component(
                device: try #require(UInt64(fields[0])), folderInode: try #require(UInt64(fields[1])), name: fields[2],
                isPackage: false)
            #expect(component.key == UInt64(fields[3]), "key of \(fields[2])")
            #expect(LockPlan.itemOffset(component.key) == Int64(fields[4]), "offset of \(fields[2])")
        }
    }
}
