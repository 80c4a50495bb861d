import DocumentKitTesting
import Foundation
import Testing

@Suite struct NotesConcurrencyTests {
    @Test("notes edit --append from several processes at once: every line lands", .timeLimit(.minutes(2)))
    func concurrentAppendsAllLand() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-concurrent")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Shared"])
        let writers = 4
        let appends = 30
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for index in 0..<appends {
                        let result = try notes.run(["edit", "Shared", "--append", "w\(writer)-\(index)"])
                        #expect(result.status == 0, "\(result.stderr)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let lines = try notes.ok(["show", "Shared"]).split(separator: "\n").map(String.init)
        let expected = (0..<writers).flatMap { writer in (0..<appends).map { "w\(writer)-\($0)" } }
        #expect(lines.count == expected.count)
        #expect(Set(lines) == Set(expected))
        // Each writer's lines are in its own order.
        for writer in 0..<writers {
            let mine = lines.filter { $0.hasPrefix("w\(writer)-") }
            #expect(mine == (0..<appends).map { "w\(writer)-\($0)" })
        }
    }
}
