import DocumentKitSystem
import DocumentKitTesting
import FilePackages
import Foundation
import FormatVersioning
import Testing

@Suite struct ManifestReadingTests {
    @Test("a notes v1 manifest reads with version-1 defaults, its title and created kept for the app")
    func notesVersionOne() throws {
        let url = Fixtures.notes.appendingPathComponent("trip-to-lisbon.note")
        let tree = try FileWrapper(contentsOf: url)
        let manifest = try DocumentManifest(package: tree, manifestName: "Info.json", packagePath: url.path)
        #expect(manifest.formatIdentifier == "org.documentkit.notes")
        #expect(manifest.formatVersion == 1)
        #expect(manifest.minimumReaderVersion == 1)
        #expect(manifest.minimumWriterVersion == 1)
        #expect(manifest.requiredFeatures.isEmpty && manifest.optionalFeatures.isEmpty)
        #expect(manifest.appliedMigrations.isEmpty)
        #expect(manifest.members == nil)
        #expect(manifest.writer == DocumentManifest.Writer(name: "notes", version: "0.1.0"))
        #expect(manifest.documentIdentifier == "08413DAC-36FB-4749-A197-E7246D21F538")
        #expect(manifest.additionalFields["title"]?.stringValue == "Trip to Lisbon")
        #expect(manifest.additionalFields["created"]?.stringValue == "2026-11-22T02:10:15Z")
        #expect(Set(manifest.additionalFields.keys) == ["title", "created"])
    }

    @Test("every notes v1 fixture reads, and a notes v1 reader of format 1 may open it read-write")
    func everyNotesFixture() throws {
        let notes = FormatDescription(identifier: "org.documentkit.notes", version: 1, knownFields: ["title", "created"])
        for name in try FileManager.default.contentsOfDirectory(atPath: Fixtures.notes.path) {
            let url = Fixtures.notes.appendingPathComponent(name)
            let manifest = try DocumentManifest(package: FileWrapper(contentsOf: url), manifestName: "Info.json", packagePath: url.path)
            guard case .readWrite = notes.compatibility(of: manifest, at: url.path) else {
                Issue.record("\(name) should open read-write")
                continue
            }
        }
    }

    @Test("missing minimum versions default to the format version")
    func minimumVersionsDefault() throws {
        let manifest = try Fixtures.manifest("hand-made/older-without-versions.json")
        #expect(manifest.formatVersion == 1)
        #expect(manifest.minimumReaderVersion == 1)
        #expect(manifest.minimumWriterVersion == 1)
        let newer = try DocumentManifest(
            jsonData: Data(#"{"format":"a.b","formatVersion":7,"minReaderVersion":3,"documentIdentifier":"x","writer":{"name":"n","version":"1"}}"#.utf8),
            path: "/m.json")
        #expect(newer.minimumReaderVersion == 3)
        #expect(newer.minimumWriterVersion == 7)
    }

    @Test("a manifest in compact layout reads like a pretty one; escapes in unknown values stay as written")
    func compactLayout() throws {
        let manifest = try Fixtures.manifest("hand-made/compact.json")
        #expect(manifest.formatVersion == 3 && manifest.minimumReaderVersion == 2)
        #expect(manifest.additionalFields["extra"]?.jsonText == #"[1,2.50,"x\/y"]"#)
    }

    @Test("unknown values keep their exact text: big numbers, exponents, spacing, escapes")
    func unknownValuesKeepText() throws {
        let manifest = try Fixtures.manifest("hand-made/future-optional-features.json")
        #expect(manifest.additionalFields["preciseScale"]?.jsonText == "12345678901234567890.5")
        #expect(manifest.additionalFields["tinyEpsilon"]?.jsonText == "1e400")
        #expect(manifest.additionalFields["inkSettings"]?.jsonText
            == ##"{ "pressure":true,  "smoothing" : 0.35 ,"palette":[ "#000", "#c0392b" ] }"##)
        #expect(manifest.additionalFields["unicodeéKey"]?.stringValue == "été 🎨")
        #expect(manifest.additionalFields["unicodeéKey"]?.jsonText == #""\u00e9t\u00e9 \ud83c\udfa8""#)
        #expect(manifest.writer.additionalFields["platform"]?.stringValue == "linux-aarch64")
        #expect(manifest.members?["body.md"]?.additionalFields["compression"]?.stringValue == "none")
    }

    @Test("a 100,000-deep nest of arrays is refused as too deep, without recursion")
    func deepNesting() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let json = #"{"format":"a.b","formatVersion":1,"documentIdentifier":"x","writer":{"name":"n","version":"1"},"deep":"#
            + deep + "}"
        let error = #expect(throws: DocumentKitError.self) {
            try DocumentManifest(jsonData: Data(json.utf8), path: "/docs/Deep.sketch/Info.json")
        }
        #expect(error?.code == .corruptData)
        #expect(error?.path == "/docs/Deep.sketch/Info.json")
        #expect(error?.description.contains("nested more than 64 levels deep") == true)
    }

    @Test("an unclosed 100,000-deep nest is refused the same way")
    func deepUnclosedNesting() {
        let json = #"{"x":"# + String(repeating: "{\"a\":", count: 100_000)
        let error = #expect(throws: DocumentKitError.self) { try DocumentManifest(jsonData: Data(json.utf8), path: "/m.json") }
        #expect(error?.description.contains("nested more than 64 levels deep") == true)
    }

    @Test("a 10 MB manifest is refused by its size, before it is parsed")
    func tooLarge() throws {
        let filler = String(repeating: "x", count: 10_000_000)
        let json = #"{"format":"a.b","formatVersion":1,"documentIdentifier":"x","writer":{"name":"n","version":"1"},"pad":""#
            + filler + #""}"#
        let error = #expect(throws: DocumentKitError.self) {
            try DocumentManifest(jsonData: Data(json.utf8), path: "/docs/Big.sketch/Info.json")
        }
        #expect(error?.code == .corruptData)
        #expect(error?.description.contains("/docs/Big.sketch/Info.json") == true)
        #expect(error?.description.contains("more than the limit of 8388608") == true)
    }

    @Test("a 10 MB manifest member of a package is refused by its size, without reading it")
    func tooLargeMember() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Big.sketch")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let manifestURL = url.appendingPathComponent("Info.json")
        #expect(FileManager.default.createFile(atPath: manifestURL.path, contents: nil))
        let handle = try FileHandle(forWritingTo: manifestURL)
        try handle.truncate(atOffset: 10_000_000)
        try handle.close()
        let tree = try FileWrapper(contentsOf: url)
        let error = #expect(throws: DocumentKitError.self) {
            try DocumentManifest(package: tree, manifestName: "Info.json", packagePath: url.path)
        }
        #expect(error?.description.contains("10000000 bytes") == true)
        #expect(error?.path == manifestURL.path)
    }

    @Test("a string of 2 MB where an identifier belongs is refused, naming the field")
    func hugeIdentifier() {
        let json = #"{"format":"a.b","formatVersion":1,"writer":{"name":"n","version":"1"},"documentIdentifier":""#
            + String(repeating: "A", count: 2_000_000) + #""}"#
        let error = #expect(throws: DocumentKitError.self) { try DocumentManifest(jsonData: Data(json.utf8), path: "/m.json") }
        #expect(error?.description.contains("“documentIdentifier” is longer than 255 bytes") == true)
    }

    @Test("a package without its manifest, or with a folder in its place, is refused naming the manifest")
    func missingManifestMember() {
        let withoutManifest = FileWrapper(directoryWithFileWrappers: ["body.md": file("x")])
        let missing = #expect(throws: DocumentKitError.self) {
            try DocumentManifest(package: withoutManifest, manifestName: "Info.json", packagePath: "/docs/A.sketch")
        }
        #expect(missing?.description == "Couldn't read “/docs/A.sketch/Info.json”: The package has no manifest.")
        let folder = FileWrapper(directoryWithFileWrappers: ["Info.json": FileWrapper(directoryWithFileWrappers: [:])])
        let notAFile = #expect(throws: DocumentKitError.self) {
            try DocumentManifest(package: folder, manifestName: "Info.json", packagePath: "/docs/A.sketch")
        }
        #expect(notAFile?.code == .corruptData)
        #expect(notAFile?.description.contains("directory, not a file") == true)
    }

    @Test("errors give the line and column of the problem")
    func errorPosition() {
        let json = "{\n  \"format\" : \"a.b\",\n  \"formatVersion\" : true\n}\n"
        let error = #expect(throws: DocumentKitError.self) { try DocumentManifest(jsonData: Data(json.utf8), path: "/m.json") }
        #expect(error?.description
            == "Couldn't read “/m.json”: The manifest is malformed: “formatVersion” must be an integer from 1 to 2147483647, not a Boolean (line 3, column 21).")
    }
}
