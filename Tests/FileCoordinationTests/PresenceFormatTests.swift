import Foundation
import Testing

@testable import FileCoordination

/// The frozen packets of `Formats/presence/v1` still parse, and today's encoding matches them.
@Suite struct PresenceFormatTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/presence/v1/fixtures")

    @Test("version 1 request packets parse, and encode back to the same bytes")
    func requestPackets() throws {
        let read = try Data(contentsOf: Self.fixtures.appendingPathComponent("request-read.bin"))
        let parsedRead = try #require(PresenterRequest(read))
        #expect(parsedRead == PresenterRequest(kind: .reader, save: true, unit: 1_940_229_278_959_301_340, path: "/home/me/Notes/trip.note"))
        #expect(parsedRead.encoded == read)
        let delete = try Data(contentsOf: Self.fixtures.appendingPathComponent("request-delete.bin"))
        let parsedDelete = try #require(PresenterRequest(delete))
        #expect(parsedDelete == PresenterRequest(kind: .deletion, save: false, unit: 40_589_383_538_882_534, path: "/home/me/Notes/old.note"))
        #expect(parsedDelete.encoded == delete)
        #expect(PresenterRequest(Data("R sideways 1 5 /x".utf8)) == nil)
        #expect(PresenterRequest(Data("R reader 1 5 /path with spaces/a b".utf8))?.path == "/path with spaces/a b")
    }
}
