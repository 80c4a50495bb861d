import DocumentKitTesting
import Foundation
import Testing

/// `Formats/notes/compatibility.tsv`, cell by cell: the built `notes` executable, run as the
/// reader of each format version (`--reader-version N`), opens every fixture as the table says,
/// and an old reader's save keeps what a newer one wrote.
@Suite struct NotesCompatibilityMatrixTests {
    static let formats = NotesRunner.formats
    static let table = formats.appendingPathComponent("compatibility.tsv")

    /// A failure of the probe itself (not an outcome).
    struct ProbeFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// `notes` on a library holding the one document at `url`.
    static func runner(_ url: URL) -> NotesRunner { NotesRunner(library: url.deletingLastPathComponent()) }

    /// The matrix reaches `notes` through `check --json`, `edit --append` and `show --json`.
    static let probe = FormatProbe(
        open: { url, version in
            let result = try runner(url).run(["check", url.lastPathComponent, "--json", "--reader-version", "\(version)"])
            guard let checks = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]],
                checks.count == 1, let check = checks.first, let name = check["outcome"] as? String
            else { throw ProbeFailure(description: "notes check printed: \(result.stdout)\(result.stderr)") }
            let outcome = FormatMatrix.Outcome(name: name == "migrated" ? "migrated-to-\(check["migratedTo"] as? Int ?? 0)" : name)
            guard let outcome, result.status == (outcome == .refused ? 65 : 0) else {
                throw ProbeFailure(description: "notes check exited \(result.status) with the outcome \(name)")
            }
            return FormatProbe.Observation(
                outcome: outcome, message: check["message"] as? String ?? "",
                unrecognizedFields: check["unrecognizedFields"] as? [String] ?? [])
        },
        edit: { url, version in
            let result = try runner(url).run([
                "edit", url.lastPathComponent, "--append", "Edited as the reader of format \(version).", "--reader-version", "\(version)",
            ])
            guard result.status == 0 else { throw ProbeFailure(description: "notes edit exited \(result.status): \(result.stderr)") }
        },
        view: { url, version in
            let result = try runner(url).run(["show", url.lastPathComponent, "--json", "--reader-version", "\(version)"])
            guard result.status == 0, var details = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            else { throw ProbeFailure(description: "notes show exited \(result.status): \(result.stderr)") }
            for changing in ["body", "modified", "path"] { details[changing] = nil }
            let data = try JSONSerialization.data(withJSONObject: details, options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        },
        editedMembers: { version in version >= 3 ? ["body.json"] : ["body.md"] })

    @Test("every cell of Formats/notes/compatibility.tsv holds for notes --reader-version N, round trips included")
    func everyCellHolds() async throws {
        let matrix = try FormatMatrix(contentsOf: Self.table)
        #expect(matrix.readerVersions == [1, 2, 3])
        #expect(matrix.cells.count == matrix.fixtures.count * 3, "a reader version is missing for a fixture")
        let report = await matrix.run(fixtures: Self.formats, probe: Self.probe)
        #expect(report.isSuccess, "\(report)")
        #expect(report.checkedCells == 63)
    }

    @Test("the matrix covers every fixture in Formats/notes")
    func everyFixtureIsInTheMatrix() throws {
        let matrix = try FormatMatrix(contentsOf: Self.table)
        var onDisk: Set<String> = []
        for folder in ["v1/fixtures", "v2/fixtures", "v3/fixtures", "future", "damaged"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.formats.appendingPathComponent(folder).path)
            onDisk.formUnion(names.filter { $0.hasSuffix(".note") }.map { "\(folder)/\($0)" })
        }
        #expect(Set(matrix.fixtures.map { $0.precomposedStringWithCanonicalMapping }) == Set(onDisk.map { $0.precomposedStringWithCanonicalMapping }))
    }

    @Test("COMPATIBILITY.md shows the outcome of compatibility.tsv in every cell")
    func tableForPeopleAgrees() throws {
        let matrix = try FormatMatrix(contentsOf: Self.table)
        let text = try String(contentsOf: Self.formats.appendingPathComponent("COMPATIBILITY.md"), encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            rows[columns[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = Array(columns.dropFirst(2))
        }
        for cell in matrix.cells {
            let row = try #require(rows[cell.fixture], "COMPATIBILITY.md has no row for \(cell.fixture)")
            #expect(row.count > cell.readerVersion && row[cell.readerVersion - 1].contains("**\(cell.outcome)**"),
                    "\(cell): COMPATIBILITY.md says \(row[safe: cell.readerVersion - 1] ?? "nothing")")
        }
        #expect(rows.count == matrix.fixtures.count)
    }

    @Test("a read-only note shows, refuses an edit with exit status 77 saying why, and stays as it was")
    func readOnlyNote() throws {
        let directory = try TemporaryDirectory(prefix: "notes-read-only")
        let note = directory.appending("v4-higher-min-writer.note")
        try FileManager.default.copyItem(at: Self.formats.appendingPathComponent("future/v4-higher-min-writer.note"), to: note)
        let notes = Self.runner(note)
        let before = try Data(contentsOf: note.appendingPathComponent("Info.json"))
        #expect(try notes.ok(["show", "Packing list"]).hasPrefix("# Packing list\n"))
        let details = try #require(try notes.json(["show", "Packing list", "--json"]) as? [String: Any])
        #expect(details["readOnly"] as? Bool == true && details["formatVersion"] as? Int == 4)
        let edit = try notes.run(["edit", "Packing list", "--append", "no"])
        #expect(edit.status == 77)
        #expect(edit.stderr.contains("can view it but not edit it") && edit.stderr.contains("v4-higher-min-writer.note"))
        #expect(try Data(contentsOf: note.appendingPathComponent("Info.json")) == before)
        let migrate = try notes.run(["migrate"])
        #expect(migrate.status == 0 && migrate.stdout.contains("is in format 4 already"))
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
