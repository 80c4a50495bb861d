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

/// The frozen packets of `Formats/presence/v2` still parse, and today's encoding matches them.
@Suite struct PresenceVersion2FormatTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/presence/v2/fixtures")

    private func packet(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    private func parse(_ bytes: [UInt8]) -> PresenterRequest? {
        bytes.withUnsafeBytes { PresenterRequest(version2: $0) }
    }

    @Test("version 2 request packets parse, and encode back to the same bytes")
    func requestPackets() throws {
        let expected: [(String, PresenterRequest)] = [
            ("ask-read.bin", PresenterRequest(kind: .reader, save: true, unit: 1_940_229_278_959_301_340, path: "/home/me/Notes/trip.note")),
            ("ask-delete.bin", PresenterRequest(kind: .deletion, save: false, unit: 40_589_383_538_882_534, path: "/home/me/Notes/old.note")),
            (
                "ask-subitem-deletion.bin",
                PresenterRequest(
                    kind: .subitemDeletion, save: false, unit: 1_461_501_637_330_902_918, itemUnit: 40_589_383_538_882_534,
                    path: "/home/me/Notes/old.note")
            ),
        ]
        for (name, request) in expected {
            let bytes = try packet(name)
            #expect(parse(bytes) == request, "\(name)")
            #expect(request.encodedVersion2 == bytes, "\(name)")
        }
    }

    @Test("version 2 answers and the end packet are the frozen bytes")
    func fixedPackets() throws {
        #expect(try packet("answer-ok.bin") == PresencePacket.ok)
        #expect(try packet("answer-ok-hold.bin") == PresencePacket.okHold)
        #expect(try packet("answer-error.bin") == PresencePacket.error("The presenter could not save its changes first."))
        #expect(try packet("end.bin") == PresencePacket.end)
    }

    @Test("malformed version 2 requests are refused, paths keep their spaces, and version 1 packets do not pass as version 2")
    func malformedRequests() throws {
        for text in [
            "A sideways 0 5 5 /x", "A reader 2 5 5 /x", "A reader 0 5x 5 /x", "A reader 0 5 /x", "A reader 0 +5 5 /x",
            "A reader 0 99999999999999999999 5 /x", "R reader 0 5 /x", "A reader 0 5 5", "",
        ] {
            #expect(parse(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(parse(Array("A reader 1 5 -7 /path with spaces/a b".utf8)) == PresenterRequest(
            kind: .reader, save: true, unit: 5, itemUnit: -7, path: "/path with spaces/a b"))
        #expect(PresenterRequest(Data("R subitem-deletion 0 5 /x".utf8)) == nil, "version 1 has no subitem deletions")
    }
}

/// The frozen mark of `Formats/presence/v3` is the one coordinators set and presenters find.
@Suite struct PresenceVersion3FormatTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/presence/v3/fixtures")

    @Test("the fixture's mark is the mark of process 4242.abcdefghijkl.v2, and today's code finds it")
    func markName() throws {
        let folder = Self.fixtures.appendingPathComponent("presenters").path
        let mark = UnresponsiveMark(folder: folder, name: "4242.abcdefghijkl.v2")
        #expect(mark.isSet)
        #expect(!UnresponsiveMark(folder: folder, name: "4243.abcdefghijkl.v2").isSet)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [URL(fileURLWithPath: mark.path).lastPathComponent])
    }
}
