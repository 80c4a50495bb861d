// N processes × M coordinated read-modify-write increments of one file end at exactly N × M.
// The children write non-atomically (truncate, then write) and pause between reading and
// writing, so any overlap shows as a lost update or an unreadable count.

import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("No lost updates across processes")
struct LostUpdateTests {
    static let processes = 4
    static let increments = 50

    /// Runs the children (`coordinatedPaths[i]` is what child i coordinates) and returns the count.
    func run(_ fixture: Fixture, counter: String, coordinatedPaths: [String]) async throws -> Int {
        try fixture.makeFile(counter, "0\n")
        let children = try coordinatedPaths.map { coordinated in
            try Child(
                [
                    "increment", fixture.namespaceFolder.url.path, fixture.extensionsArgument, fixture.url(counter).path,
                    String(Self.increments), fixture.url(coordinated).path,
                ], outputFolder: fixture.namespaceFolder.url)
        }
        for child in children {
            let status = await child.exitStatus(timeout: .seconds(60))
            #expect(status == 0, "child \(child.pid): \(child.errorOutput)")
        }
        let text = try String(contentsOf: fixture.url(counter), encoding: .utf8)
        return try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test("4 processes × 50 coordinated increments of one file give 200")
    func oneFile() async throws {
        let fixture = try Fixture()
        let count = try await run(fixture, counter: "counter", coordinatedPaths: Array(repeating: "counter", count: Self.processes))
        #expect(count == Self.processes * Self.increments)
    }

    @Test("Writers of two members of one package serialise: 4 × 50 increments give 200")
    func twoMembersOfOnePackage() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/other", "")
        // Two children coordinate Doc.pkg/counter, two Doc.pkg/other; all increment the counter.
        let count = try await run(
            fixture, counter: "Doc.pkg/counter",
            coordinatedPaths: ["Doc.pkg/counter", "Doc.pkg/other", "Doc.pkg/counter", "Doc.pkg/other"])
        #expect(count == Self.processes * Self.increments)
    }
}
