import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// `FormatMatrix` (DocumentKitTesting) run against `VersionedTextDocument`, in this process.
@Suite struct FormatMatrixTests {
    let fixtures: TemporaryDirectory

    static let table = """
        # The test text format: version 2 adds tags (readable by 1), version 3 moves the text (not readable by 1 or 2).
        fixture\treader\toutcome\tmessage\tround-trip
        v1/a.pkg\t1\tread-write\t-\t-
        v1/a.pkg\t2\tmigrated-to-2\t-\t-
        v1/a.pkg\t3\tmigrated-to-3\t-\t-
        v2/b.pkg\t1\tread-write-preserving-unknown\t-\t2
        v2/b.pkg\t2\tread-write\t-\t-
        v2/b.pkg\t3\tmigrated-to-3\t-\t-
        v3/c.pkg\t1\trefused\tformat 3, this app reads up to 1\t-
        v3/c.pkg\t3\tread-write\t-\t-
        future/v4-optional.pkg\t2\tread-write-preserving-unknown\t-\t2
        future/v4-read-only.pkg\t2\tread-only\tcan view it but not edit it\t-
        damaged/bad.pkg\t2\trefused\tThe manifest is malformed\t-

        """

    /// Fixtures written by each version of `VersionedTextDocument`, and hand-made ones.
    init() async throws {
        fixtures = try TemporaryDirectory(prefix: "matrix-fixtures")
        for folder in ["v1", "v2", "v3", "future", "damaged"] {
            try FileManager.default.createDirectory(at: fixtures.appending(folder), withIntermediateDirectories: true)
        }
        try await VersionedTextDocument(fileURL: fixtures.appending("v1/a.pkg"), content: VersionedText(title: "A", text: "one"), readerVersion: 1).save()
        try await VersionedTextDocument(
            fileURL: fixtures.appending("v2/b.pkg"), content: VersionedText(title: "B", text: "two", tags: ["t"]), readerVersion: 2
        ).save()
        try await VersionedTextDocument(fileURL: fixtures.appending("v3/c.pkg"), content: VersionedText(title: "C", text: "three"), readerVersion: 3).save()
        try writePackage(at: fixtures.appending("future/v4-optional.pkg"), members: ["text.txt": "four", "extra.bin": "kept"]) { records in
            DocumentFormatTests.manifest(
                version: 4, minReader: 1, minWriter: 1, optional: #"["sparkles"]"#, migrations: #"["2-tags", "4-sparkles"]"#,
                extra: #""tags" : ["x"], "sparkles" : {"n" : 1.50e3}, "#, members: records)
        }
        try writePackage(at: fixtures.appending("future/v4-read-only.pkg"), members: ["text.txt": "four"]) { records in
            DocumentFormatTests.manifest(version: 4, minReader: 1, minWriter: 4, members: records)
        }
        try writePackage(at: fixtures.appending("damaged/bad.pkg"), members: ["text.txt": "?"]) { _ in "{\"format\" : [" }
    }

    static let probe = FormatProbe.document(
        editedMembers: { version in version >= 3 ? ["text.md"] : ["text.txt"] },
        make: { url, version in VersionedTextDocument(fileURL: url, readerVersion: version) },
        edit: { content in content.text += " (edited)" },
        view: { content in "\(content.title) \(content.tags)" })

    @Test("the matrix runner checks every cell of a table against a Document subclass that keeps the rules")
    func documentPassesItsMatrix() async throws {
        let matrix = try FormatMatrix(table: Self.table)
        #expect(matrix.cells.count == 11 && matrix.readerVersions == [1, 2, 3])
        let report = await matrix.run(fixtures: fixtures.url, probe: Self.probe)
        #expect(report.isSuccess, "\(report)")
        #expect(report.checkedCells == 11)
        // The fixtures themselves are never written to.
        #expect(try packageContents(fixtures.appending("v1/a.pkg"))["text.txt"] == Data("one".utf8))
    }

    @Test("the matrix runner reports a wrong outcome, a lost member, a changed field and a round trip that lost data")
    func runnerReportsWhatWentWrong() async throws {
        let wrong = try FormatMatrix(table: """
            fixture\treader\toutcome\tmessage\tround-trip
            v1/a.pkg\t2\tread-write\t-\t-
            v3/c.pkg\t1\trefused\tsomething else\t-
            future/v4-optional.pkg\t2\tread-write-preserving-unknown\t-\t2
            """)
        // An app that loses what it doesn't know when it saves.
        let careless = FormatProbe(
            open: Self.probe.open,
            edit: { url, version in
                try await Self.probe.edit(url, version)
                try FileManager.default.removeItem(at: url.appendingPathComponent("extra.bin"))
                let manifestURL = url.appendingPathComponent("Info.json")
                var manifest = try DocumentManifest(jsonData: Data(contentsOf: manifestURL), path: manifestURL.path)
                manifest.additionalFields["sparkles"] = RawJSONValue(integer: 1500)
                manifest.additionalFields["tags"] = try RawJSONValue(jsonText: "[]")
                manifest.members?["extra.bin"] = nil
                try manifest.jsonData().write(to: manifestURL)
            },
            view: Self.probe.view, editedMembers: Self.probe.editedMembers)
        let report = await wrong.run(fixtures: fixtures.url, probe: careless)
        let problems = report.failures.map(\.description)
        #expect(report.checkedCells == 3 && !report.isSuccess)
        #expect(problems.contains { $0.contains("v1/a.pkg × reader 2") && $0.contains("expected read-write, got migrated-to-2") })
        #expect(problems.contains { $0.contains("doesn't contain “something else”") })
        #expect(problems.contains { $0.contains("the member “extra.bin” was removed") })
        #expect(problems.contains { $0.contains("the field “sparkles”") && $0.contains("1500") })
        #expect(problems.contains { $0.contains("the reader of version 2 sees it differently") }, "\(report)")
    }

    @Test("a malformed matrix table is an error naming its line")
    func malformedTable() throws {
        let header = "fixture\treader\toutcome\tmessage\tround-trip\n"
        let cases: [(String, String)] = [
            ("v1/a.pkg\t1\tread-write\t-\t-\n", "the header must be"),
            (header + "v1/a.pkg\t1\tread-write\n", "line 2, is malformed: 3 columns instead of 5"),
            (header + "v1/a.pkg\tone\tread-write\t-\t-\n", "reader version “one”"),
            (header + "v1/a.pkg\t1\topens\t-\t-\n", "unknown outcome “opens”"),
            (header + "v1/a.pkg\t1\trefused\t-\t2\n", "a round trip needs an outcome that allows writing"),
            (header + "v1/a.pkg\t1\trefused\t-\t-\nv1/a.pkg\t1\tread-only\t-\t-\n", "line 3, is malformed: v1/a.pkg × reader 1 appears twice"),
        ]
        for (table, problem) in cases {
            #expect {
                _ = try FormatMatrix(table: table, path: "matrix.tsv")
            } throws: { error in
                "\(error)".contains("matrix.tsv") && "\(error)".contains(problem)
            }
        }
    }
}
