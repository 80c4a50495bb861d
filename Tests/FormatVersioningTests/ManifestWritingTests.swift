import DocumentKitSystem
import FilePackages
import Foundation
import FormatVersioning
import Testing

@Suite struct ManifestWritingTests {
    @Test("a save by an older writer keeps every unknown field, optional feature and record byte for byte")
    func preservesUnknownByteForByte() throws {
        let original = try Fixtures.data("hand-made/future-optional-features.json")
        var manifest = try Fixtures.manifest("hand-made/future-optional-features.json")
        // What a version-3 app changes when it saves: its own field and the writer.
        manifest.additionalFields["title"] = RawJSONValue(string: "Edited by version 3")
        manifest.writer = Sketchbook.writer
        let written = try manifest.jsonData()
        let text = text(written)
        for unknown in [
            ##""inkSettings" : { "pressure":true,  "smoothing" : 0.35 ,"palette":[ "#000", "#c0392b" ] }"##,
            #""preciseScale" : 12345678901234567890.5"#,
            #""tinyEpsilon" : 1e400"#,
            #""compression" : "none""#,
            #""v4-ink-strokes""#,
            #""ink""#,
        ] {
            #expect(text.contains(unknown), "\(unknown) is missing from the saved manifest")
            #expect(String(decoding: original, as: UTF8.self).contains(unknown))
        }
        #expect(text.contains(#""unicodeéKey" : "\u00e9t\u00e9 \ud83c\udfa8""#))
        let reread = try DocumentManifest(jsonData: written, path: "/saved/Info.json")
        #expect(reread.additionalFields.filter { $0.key != "title" }
            == manifest.additionalFields.filter { $0.key != "title" })
        #expect(reread.formatVersion == 4 && reread.minimumReaderVersion == 2 && reread.minimumWriterVersion == 3)
        #expect(reread.optionalFeatures == ["ink", "tags"])
        #expect(reread.appliedMigrations == ["v2-add-tags", "v3-layers-folder", "v4-ink-strokes"])
        #expect(reread.members == manifest.members)
        #expect(reread == manifest)
    }

    @Test("the same manifest gives the same bytes, whatever order it was built in")
    func deterministic() throws {
        var first = sampleManifest()
        first.requiredFeatures = ["b", "a", "c"]
        first.optionalFeatures = ["z", "y"]
        first.additionalFields = ["zeta": .null, "Alpha": RawJSONValue(integer: 1), "ébène": RawJSONValue(bool: true)]
        first.members = ["b/2": MemberRecord(size: 2, sha256: String(repeating: "2", count: 64)),
                         "a": MemberRecord(size: 1, sha256: String(repeating: "1", count: 64))]
        var second = sampleManifest()
        second.optionalFeatures = ["y", "z"]
        second.requiredFeatures = ["c", "a", "b"]
        second.members = ["a": MemberRecord(size: 1, sha256: String(repeating: "1", count: 64))]
        second.members?["b/2"] = MemberRecord(size: 2, sha256: String(repeating: "2", count: 64))
        second.additionalFields["ébène"] = RawJSONValue(bool: true)
        second.additionalFields["Alpha"] = RawJSONValue(integer: 1)
        second.additionalFields["zeta"] = .null
        let bytes = try first.jsonData()
        #expect(bytes == (try second.jsonData()))
        let text = text(bytes)
        // Keys in the order of their UTF-8 bytes: upper case before lower case before non-ASCII.
        let order = ["\"Alpha\"", "\"appliedMigrations\"", "\"documentIdentifier\"", "\"format\"", "\"members\"", "\"zeta\"", "\"ébène\""]
        let positions = order.map { text.range(of: $0)!.lowerBound }
        #expect(positions == positions.sorted())
        #expect(text.contains("\"requiredFeatures\" : [\n    \"a\",\n    \"b\",\n    \"c\"\n  ]"))
        #expect(text.hasSuffix("}\n"))
    }

    @Test("strings are escaped minimally and read back equal")
    func escaping() throws {
        var manifest = sampleManifest()
        manifest.additionalFields["text"] = RawJSONValue(string: "quote \" backslash \\ slash / tab \t nul \u{0} bell \u{7} é 🎨")
        manifest.writer.name = "app \"quoted\""
        let text = text(try manifest.jsonData())
        #expect(text.contains(#""quote \" backslash \\ slash / tab \t nul \u0000 bell \u0007 é 🎨""#))
        #expect(text.contains(#""name" : "app \"quoted\"""#))
        let reread = try DocumentManifest(jsonData: manifest.jsonData(), path: "/m.json")
        #expect(reread.additionalFields["text"]?.stringValue == "quote \" backslash \\ slash / tab \t nul \u{0} bell \u{7} é 🎨")
        #expect(reread.writer.name == "app \"quoted\"")
    }

    @Test("a manifest that a reader would refuse is never written; the error names the value")
    func refusesInvalidValues() {
        var reserved = sampleManifest()
        reserved.additionalFields["formatVersion"] = RawJSONValue(integer: 9)
        var versions = sampleManifest()
        versions.minimumReaderVersion = 5
        var writerBelowReader = sampleManifest(minimumReader: 3, minimumWriter: 2)
        writerBelowReader.formatVersion = 3
        var digest = sampleManifest()
        digest.members = ["body.md": MemberRecord(size: 1, sha256: "not a digest")]
        var path = sampleManifest()
        path.members = ["a//b": MemberRecord(size: 1, sha256: String(repeating: "0", count: 64))]
        var both = sampleManifest()
        both.requiredFeatures = ["tags"]
        both.optionalFeatures = ["tags"]
        var identifier = sampleManifest()
        identifier.formatIdentifier = "not reverse dns"
        var migrations = sampleManifest()
        migrations.appliedMigrations = ["v2", "v2"]
        let cases: [(DocumentManifest, String)] = [
            (reserved, "“formatVersion” is a field the manifest defines"),
            (versions, "“minReaderVersion” (5) is higher than “formatVersion” (3)"),
            (writerBelowReader, "“minWriterVersion” (2) is lower than “minReaderVersion” (3)"),
            (digest, "the sha256 of “body.md” must be 64 lower-case hexadecimal digits"),
            (path, "the member path “a//b” is not a relative path"),
            (both, "the feature “tags” is both required and optional"),
            (identifier, "“format” is not a reverse-DNS identifier"),
            (migrations, "“appliedMigrations” has duplicates"),
        ]
        for (manifest, problem) in cases {
            let error = #expect(throws: DocumentKitError.self) { try manifest.jsonData() }
            #expect(error?.code == .invalidArgument)
            #expect(error?.description.contains(problem) == true, "\(error?.description ?? "no error")")
        }
    }

    @Test("a notes v1 manifest keeps its fields and values through a read and a write")
    func notesRoundTrip() throws {
        let url = Fixtures.notes.appendingPathComponent("ünïcødé-symbols.note")
        let manifest = try DocumentManifest(package: FileWrapper(contentsOf: url), manifestName: "Info.json", packagePath: url.path)
        let written = try manifest.jsonData()
        #expect(try DocumentManifest(jsonData: written, path: "/m.json") == manifest)
        let original = try text(Data(contentsOf: url.appendingPathComponent("Info.json")))
        let title = try #require(original.split(separator: "\n").first { $0.contains("\"title\"") })
        #expect(text(written).contains(title))
    }
}
