@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Index under churn")
struct IndexChurnTests {
    /// Runs a shell command in the library; whether it succeeded.
    static func shell(_ command: String, in folder: URL) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = folder
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// The entries the batches add up to, from the gathering batch on.
    static func applied(_ batches: [IndexBatch]) -> [String: IndexEntry] {
        var entries: [String: IndexEntry] = [:]
        for batch in batches {
            if batch.kind != .update { entries = [:] }
            for entry in batch.removed { entries[entry.relativePath] = nil }
            for move in batch.moved {
                entries[move.from.relativePath] = nil
                entries[move.to.relativePath] = move.to
            }
            for entry in batch.added + batch.changed { entries[entry.relativePath] = entry }
        }
        return entries
    }

    /// What differs between the batches' sum and a fresh scan, path by path (the whole
    /// dictionaries are too long to read in a failure).
    static func difference(_ applied: [String: IndexEntry], _ expected: [String: IndexEntry]) -> String {
        let paths = Set(applied.keys).union(expected.keys).sorted()
        return paths.compactMap { path -> String? in
            switch (applied[path], expected[path]) {
            case let (got?, want?) where got != want: "\(path): batches \(got), fresh \(want)"
            case (_?, nil): "\(path): in the batches only"
            case (nil, _?): "\(path): in the fresh scan only"
            default: nil
            }
        }.joined(separator: "; ")
    }

    @Test("while another process writes notes and the shell moves, removes and copies them, the batches add up to a fresh scan")
    func churn() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<20 { try library.writeNote("Start\(n).note", title: "Start \(n)") }
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })

        let child = try IndexChild(library, prefix: "Child", count: "30")
        #expect(try Self.shell("""
            mkdir -p Moved/Deeper && for n in 0 1 2 3 4; do mv Start$n.note Moved/Deeper/; done && \
            rm -rf Start5.note Start6.note && cp -a Start7.note Copy7.note && cp -a Start8.note Moved/Copy8.note && \
            mv Moved Renamed && mv Start9.note Start9-renamed.note
            """, in: library.url))
        #expect(await child.wait() == 0, "\(child.errors)")
        try await index.sync()
        try await index.sync()

        let fresh = try DocumentIndex(library.configuration(persistent: false))
        let expected = await summary(fresh.entries)
        // sync() returns once the index has published its batches; the collector's task may
        // still be taking the last one from the sequence: wait for it (10 s at most), then compare.
        _ = await collector.wait { Self.applied($0) == expected }
        let applied = Self.applied(collector.batches)
        #expect(applied == expected, "\(Self.difference(applied, expected))")
        let held = await summary(index.entries)
        #expect(held == expected, "\(Self.difference(held, expected))")
        let expectedCount = 50  // 20, less 2 removed, plus 2 copies and 30 written
        #expect(expected.count == expectedCount)
        // A copy keeps its original's identifier: two live paths, a duplicate, not a move.
        let copied = await index.entries(withDocumentIdentifier: expected["Start7.note"]!.documentIdentifier!)
        #expect(copied.map(\.relativePath) == ["Copy7.note", "Start7.note"])
        await index.close()
    }
}
