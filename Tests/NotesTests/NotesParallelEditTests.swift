import DocumentKitTesting
import Foundation
import Testing

/// Issue #12 §1, as the reporter saw it: concurrent `notes edit Ni --append x`, each
/// process on its own note of one library, used to fail (exit 74, "opening the temporary package
/// … No such file or directory") when a sibling's sweep removed its fresh temporary tree.
@Suite struct NotesParallelEditTests {
    @Test("rounds of 12 processes each appending to its own note: every edit succeeds and lands", .timeLimit(.minutes(3)))
    func editsOfDifferentNotesNeverFail() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-parallel")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        let count = 12
        let rounds = 4
        for index in 0..<count { try notes.ok(["new", "N\(index)"]) }
        var failures: [String] = []
        for round in 0..<rounds {
            let results = try await withThrowingTaskGroup(of: (Int, NotesRunner.Result).self) { group in
                for index in 0..<count {
                    group.addTask { (index, try notes.run(["edit", "N\(index)", "--append", "r\(round)"])) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (index, result) in results where result.status != 0 {
                failures.append("round \(round), N\(index): exit \(result.status): \(result.stderr)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(count * rounds) edits failed: \(failures.prefix(3))")
        for index in 0..<count {
            let lines = try notes.ok(["show", "N\(index)"]).split(separator: "\n").map(String.init)
            #expect(lines.filter { $0.hasPrefix("r") } == (0..<rounds).map { "r\($0)" }, "N\(index): \(lines)")
        }
    }
}
