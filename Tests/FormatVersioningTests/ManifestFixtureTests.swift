import DocumentKitSystem
import FilePackages
import Foundation
import FormatVersioning
import Testing

/// The frozen fixtures of `Formats/manifest/v1` still read to the same values, and manifests the
/// code wrote are written again byte for byte.
@Suite struct ManifestFixtureTests {
    @Test("manifests written by version 1 read to the same values and are rewritten byte for byte",
          arguments: ["written/everything.json", "written/single-file.json", "packages/complete.sketch/Info.json"])
    func writtenFixturesRoundTrip(path: String) throws {
        let data = try Fixtures.data(path)
        let manifest = try Fixtures.manifest(path)
        #expect(try manifest.jsonData() == data)
    }

    @Test("the fixture with every field reads to exactly the values it was written with")
    func everythingValues() throws {
        let manifest = try Fixtures.manifest("written/everything.json")
        #expect(manifest.formatIdentifier == Sketchbook.identifier)
        #expect(manifest.formatVersion == 3)
        #expect(manifest.minimumReaderVersion == 2)
        #expect(manifest.minimumWriterVersion == 3)
        #expect(manifest.requiredFeatures == ["layers"])
        #expect(manifest.optionalFeatures == ["tags", "thumbnails"])
        #expect(manifest.writer.name == "sketchbook" && manifest.writer.version == "3.0.0")
        #expect(manifest.writer.additionalFields == ["build": RawJSONValue(string: "2026.11.22-1")])
        #expect(manifest.documentIdentifier == "5F0E3C1B-8A2D-4E6F-B1C9-7D3A5E9F0B24")
        #expect(manifest.appliedMigrations == ["v2-add-tags", "v3-layers-folder"])
        #expect(manifest.members?["body.md"] == MemberRecord(size: 44, sha256: String(repeating: "ab", count: 32)))
        let unicode = try #require(manifest.members?["attachments/ünïcødé name.txt"])
        #expect(unicode.size == 0)
        #expect(unicode.sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(unicode.additionalFields["mode"]?.integerValue == 420)
        #expect(manifest.additionalFields["title"]?.stringValue == "Quotes \" and \\ and\ttabs, ünïcødé, emoji 🎨, slash /")
        #expect(manifest.additionalFields["bigNumber"]?.jsonText == "12345678901234567890.5")
        #expect(manifest.additionalFields["hugeExponent"]?.jsonText == "1e400")
        #expect(manifest.additionalFields["negativeZero"]?.jsonText == "-0.0")
        #expect(manifest.additionalFields["nested"]?.jsonText == #"{"b":[1,2,{"c":null}],"a":true}"#)
        #expect(manifest.additionalFields["empty"]?.jsonText == "{}")
    }

    @Test("hand-made manifests from newer versions read, with what they add kept")
    func handMadeRead() throws {
        let future = try Fixtures.manifest("hand-made/future-optional-features.json")
        #expect(future.formatVersion == 4 && future.minimumReaderVersion == 2 && future.minimumWriterVersion == 3)
        #expect(future.optionalFeatures == ["ink", "tags"])
        #expect(try Fixtures.manifest("hand-made/unknown-required-feature.json").requiredFeatures == ["encryption"])
        #expect(try Fixtures.manifest("hand-made/higher-min-writer.json").minimumWriterVersion == 5)
        #expect(try Fixtures.manifest("hand-made/higher-min-reader.json").minimumReaderVersion == 4)
    }

    /// Each damaged fixture and the problem its error must name.
    static let damagedCases: [(name: String, problem: String)] = [
        ("bad-json.json", "a string that never ends (line 6, column 14)"),
        ("trailing-comma.json", "a comma before “}” (line 9, column 1)"),
        ("not-an-object.json", "the manifest must be a JSON object, not an array"),
        ("wrong-type-version.json", "“formatVersion” must be an integer from 1 to 2147483647, not a string"),
        ("wrong-type-members.json", "“members” must be an object of member paths, not an array"),
        ("wrong-type-features.json", "“requiredFeatures” must be an array of strings, not a string"),
        ("wrong-type-writer.json", "“writer” must be an object with “name” and “version”, not a string"),
        ("fractional-version.json", "“formatVersion” must be an integer from 1 to 2147483647, not 3.0"),
        ("huge-version.json", "not 99999999999999999999999"),
        ("huge-member-size.json", "“members[\"body.md\"].size” must be an integer from 0 to 9223372036854775807, not 1e30"),
        ("negative-member-size.json", "not -44"),
        ("bad-digest.json", "“members[\"body.md\"].sha256” must be 64 lower-case hexadecimal digits"),
        ("escaping-member-path.json", "the member path “../outside.txt” is not a relative path of plain names"),
        ("missing-identifier.json", "the manifest has no “documentIdentifier” field"),
        ("duplicate-key.json", "the field “formatVersion” appears twice (line 5, column 3)"),
        ("bad-utf8.json", "the text is not valid UTF-8 (line 5, column 17)"),
        ("min-reader-above-format.json", "“minReaderVersion” (5) is higher than “formatVersion” (3)"),
        ("bad-format-identifier.json", "“format” is not a reverse-DNS identifier"),
        ("lone-surrogate.json", "a “\\u” escape that is half of a surrogate pair"),
        ("control-character.json", "a control character in a string"),
        ("byte-order-mark.json", "starts with a byte-order mark"),
        ("text-after-object.json", "there is text after the manifest's object"),
        ("feature-required-and-optional.json", "the feature “layers” is both required and optional"),
    ]

    @Test("every damaged manifest is an error naming the file and the problem, never a crash", arguments: damagedCases)
    func damaged(name: String, problem: String) throws {
        let url = Fixtures.url("damaged/" + name)
        let error = #expect(throws: DocumentKitError.self) { try DocumentManifest(jsonData: Data(contentsOf: url), path: url.path) }
        #expect(error?.code == .corruptData)
        #expect(error?.operation == .read)
        #expect(error?.description.hasPrefix("Couldn't read “\(url.path)”: The manifest is malformed: ") == true)
        #expect(error?.description.contains(problem) == true, "\(error?.description ?? "no error")")
    }

    @Test("every damaged fixture is listed in the damaged test")
    func everyDamagedFixtureTested() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.url("damaged").path)
        #expect(Set(names) == Set(Self.damagedCases.map(\.name)))
    }
}
