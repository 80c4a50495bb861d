import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A `Document` with a format applies the manifest's rules when it opens and writes the manifest
/// when it saves (`Formats/manifest/v1/SPEC.md`, "Compatibility").
@Suite struct DocumentFormatTests {
    let directory: TemporaryDirectory
    var url: URL { directory.appending("Doc.pkg") }

    init() throws { directory = try TemporaryDirectory(prefix: "document-format") }

    /// The manifest text of a test-format package, with `extra` fields (`"key" : value, `).
    static func manifest(
        version: Int, minReader: Int? = nil, minWriter: Int? = nil, format: String = VersionedTextDocument.identifier,
        required: String = "[]", optional: String = "[]", migrations: String = "[]", extra: String = "",
        members: String?
    ) -> String {
        var fields = [
            "\"format\" : \"\(format)\"", "\"formatVersion\" : \(version)", "\"requiredFeatures\" : \(required)",
            "\"optionalFeatures\" : \(optional)", "\"appliedMigrations\" : \(migrations)",
            "\"writer\" : {\"name\" : \"texts\", \"version\" : \"\(version).0\", \"build\" : \"x-17\"}",
            "\"documentIdentifier\" : \"6E1C7F0A-0000-4000-8000-00000000000A\"", "\"title\" : \"Hand-made\"",
        ]
        if let minReader { fields.append("\"minReaderVersion\" : \(minReader)") }
        if let minWriter { fields.append("\"minWriterVersion\" : \(minWriter)") }
        if let members { fields.append("\"members\" : \(members)") }
        return "{" + extra + fields.joined(separator: ", ") + "}\n"
    }

    private func open(version: Int, saveOptions: SaveOptions = SaveOptions()) async throws(DocumentKitError)
        -> VersionedTextDocument
    {
        let document = VersionedTextDocument(fileURL: url, readerVersion: version, saveOptions: saveOptions)
        try await document.open()
        return document
    }

    /// Opens the document as the reader of `version`, expecting it to be refused: the error.
    private func refusal(version: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> DocumentKitError? {
        do {
            _ = try await open(version: version)
            Issue.record("the document opened", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    private func manifestOnDisk() throws -> DocumentManifest {
        try DocumentManifest(jsonData: Data(contentsOf: url.appendingPathComponent("Info.json")), path: url.path)
    }

    @Test("a document without a format reads and writes no manifest")
    func noFormatNoManifest() async throws {
        try await TextPackageDocument(fileURL: url, content: TextContent(text: "plain")).save()
        #expect(try directory.contents() == ["Doc.pkg"])
        #expect(try packageContents(url).keys.sorted() == ["text.txt"])
        let document = try await TextPackageDocument.open(at: url)
        #expect(document.manifest == nil && document.formatStatus == nil)
    }

    @Test("a new document with a format saves a manifest with its version, its writer and a record of every member")
    func newDocumentManifest() async throws {
        let document = VersionedTextDocument(
            fileURL: url, content: VersionedText(title: "First", text: "hello", tags: ["a"]), readerVersion: 2)
        try await document.save()
        let manifest = try manifestOnDisk()
        #expect(manifest.formatIdentifier == VersionedTextDocument.identifier)
        #expect(manifest.formatVersion == 2 && manifest.minimumReaderVersion == 1 && manifest.minimumWriterVersion == 1)
        #expect(manifest.writer == DocumentManifest.Writer(name: "texts", version: "2.0"))
        #expect(manifest.appliedMigrations == ["2-tags"])
        #expect(manifest.additionalFields["title"]?.stringValue == "First")
        #expect(manifest.members?.keys.sorted() == ["text.txt"])
        #expect(manifest.members?["text.txt"]?.size == 5)
        #expect(manifest == document.manifest)
        var hasher = MemberHasher()
        let tree = try FileWrapper(contentsOf: url)
        #expect(try hasher.verify(tree, against: manifest, manifestName: "Info.json", packagePath: url.path).isComplete)
        // Its identifier stays across saves.
        try document.update { $0.text = "hello again" }
        try await document.save()
        #expect(try manifestOnDisk().documentIdentifier == manifest.documentIdentifier)
    }

    @Test("a document in this app's version opens read-write with its manifest fields")
    func sameVersionOpensReadWrite() async throws {
        try await VersionedTextDocument(
            fileURL: url, content: VersionedText(title: "Same", text: "body", tags: ["x", "y"]), readerVersion: 2
        ).save()
        let document = try await open(version: 2)
        #expect(document.content == VersionedText(title: "Same", text: "body", tags: ["x", "y"]))
        #expect(document.documentState == .normal)
        let status = try #require(document.formatStatus)
        guard case .readWrite = status.compatibility else {
            Issue.record("expected read-write, got \(status.compatibility)")
            return
        }
        #expect(!status.isReadOnly && status.migrationSteps.isEmpty && !status.keepsOriginalOnNextSave)
        #expect(status.verification.isComplete && status.verification.listedCount == 1)
    }

    @Test("an older document is migrated in memory and written in the new version only at the next save")
    func olderDocumentMigrates() async throws {
        try await VersionedTextDocument(fileURL: url, content: VersionedText(title: "Old", text: "v1 text"), readerVersion: 1)
            .save()
        let before = try packageContents(url)
        let document = try await open(version: 3)
        #expect(document.content == VersionedText(title: "Old", text: "v1 text", tags: []))
        let status = try #require(document.formatStatus)
        #expect(status.migrationSteps == ["2-tags", "3-text-md"])
        #expect(status.migratedFromFormatVersion == 1 && status.keepsOriginalOnNextSave)
        #expect(status.manifestOnDisk.formatVersion == 1)
        #expect(document.manifest?.formatVersion == 3)
        #expect(try packageContents(url) == before, "opening wrote to disk")

        try await document.save()
        #expect(document.formatStatus?.keepsOriginalOnNextSave == false)
        let manifest = try manifestOnDisk()
        #expect(manifest.formatVersion == 3 && manifest.minimumReaderVersion == 3)
        #expect(manifest.appliedMigrations == ["2-tags", "3-text-md"])
        #expect(try packageContents(url).keys.sorted() == ["Info.json", "text.md"])
        #expect(try await open(version: 3).content.text == "v1 text")
    }

    @Test("a newer document older writers may change opens read-write, and a save keeps what this version doesn't know byte for byte")
    func newerDocumentKeepsUnknownContent() async throws {
        let futureValue = #"{"z" : 1.50e3,   "a" : [12345678901234567890.5, "\u00e9"]}"#
        try writePackage(at: url, members: ["text.txt": "from v5", "future/index.bin": "opaque"]) { records in
            Self.manifest(
                version: 5, minReader: 1, minWriter: 2, optional: #"["sparkles"]"#, migrations: #"["2-tags", "5-index"]"#,
                extra: "\"tags\" : [\"kept\"], \"future\" : \(futureValue), ", members: records)
        }
        let indexInode = try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("future/index.bin").path)[.systemFileNumber]
        let document = try await open(version: 2)
        guard case .readWritePreservingUnknown(let unknown) = try #require(document.formatStatus).compatibility else {
            Issue.record("expected read-write preserving unknown content, got \(String(describing: document.formatStatus))")
            return
        }
        #expect(unknown.newerFormatVersion == 5 && unknown.optionalFeatures == ["sparkles"])
        #expect(unknown.fields == ["future"] && unknown.migrations == ["5-index"])
        #expect(document.content.tags == ["kept"])

        try document.update { $0.text = "edited by v2" }
        try await document.save()
        let manifest = try manifestOnDisk()
        #expect(manifest.formatVersion == 5 && manifest.minimumReaderVersion == 1 && manifest.minimumWriterVersion == 2)
        #expect(manifest.additionalFields["future"]?.jsonText == futureValue)
        #expect(manifest.optionalFeatures == ["sparkles"] && manifest.appliedMigrations == ["2-tags", "5-index"])
        #expect(manifest.writer == DocumentManifest.Writer(name: "texts", version: "2.0", additionalFields: ["build": try RawJSONValue(jsonText: "\"x-17\"")]))
        #expect(try String(contentsOf: url.appendingPathComponent("Info.json"), encoding: .utf8).contains(futureValue))
        let contents = try packageContents(url)
        #expect(contents["future/index.bin"] == Data("opaque".utf8))
        #expect(contents["text.txt"] == Data("edited by v2".utf8))
        #expect(
            try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("future/index.bin").path)[.systemFileNumber]
                as? Int == indexInode as? Int, "the unknown member was rewritten, not linked")
        #expect(manifest.members?.keys.sorted() == ["future/index.bin", "text.txt"])
    }

    @Test("a newer document that needs a newer writer opens read-only: readable, but update and save refuse and the file stays")
    func newerWriterNeededOpensReadOnly() async throws {
        try writePackage(at: url, members: ["text.txt": "read me"]) { records in
            Self.manifest(version: 4, minReader: 2, minWriter: 4, members: records)
        }
        let before = try packageContents(url)
        let document = try await open(version: 2)
        #expect(document.content.text == "read me")
        #expect(document.documentState.contains(.editingDisabled))
        let status = try #require(document.formatStatus)
        #expect(status.isReadOnly)
        #expect(status.message.contains("can view it but not edit it") && status.message.contains("format 4"))
        do {
            try document.update { $0.text = "no" }
            Issue.record("a read-only document took an edit")
        } catch {
            #expect(error.code == .readOnlyDocument)
            #expect(error.description.contains(url.path) && error.description.contains("needs format 4 or later"))
        }
        #expect(document.content.text == "read me" && !document.hasUnsavedChanges)
        await #expect(throws: DocumentKitError.self) { try await document.save() }
        do { try await document.save() } catch { #expect(error.code == .readOnlyDocument) }
        #expect(!document.documentState.contains(.savingError))
        #expect(try packageContents(url) == before)
    }

    @Test("a document that needs a newer reader is refused, naming the file, its format and versions, and this app's")
    func newerReaderNeededIsRefused() async throws {
        try writePackage(at: url, members: ["text.txt": "v4"]) { records in Self.manifest(version: 4, members: records) }
        let before = try packageContents(url)
        let error = try #require(await refusal(version: 3))
        #expect(error.code == .newerFormat)
        #expect(error.description.contains(url.path))
        #expect(error.description.contains("written by a newer version: format 4, this app reads up to 3"))
        #expect(error.description.contains(VersionedTextDocument.identifier) && error.description.contains("texts 4.0"))
        #expect(try packageContents(url) == before)
    }

    @Test("a document that needs a feature this app doesn't know is refused, naming the feature")
    func unknownRequiredFeatureIsRefused() async throws {
        try writePackage(at: url, members: ["text.txt": "locked"]) { records in
            Self.manifest(version: 2, minReader: 1, minWriter: 1, required: #"["encryption"]"#, members: records)
        }
        let error = try #require(await refusal(version: 2))
        #expect(error.code == .newerFormat)
        #expect(error.description.contains("“encryption”") && error.description.contains(url.path))
    }

    @Test("a document in another format is refused as unsupported")
    func otherFormatIsRefused() async throws {
        try writePackage(at: url, members: ["text.txt": "?"]) { records in
            Self.manifest(version: 1, format: "org.example.other", members: records)
        }
        let error = try #require(await refusal(version: 2))
        #expect(error.code == .unsupportedFormat)
        #expect(error.description.contains("org.example.other") && error.description.contains(url.path))
    }

    @Test("an incomplete package is refused, saying how many members match")
    func incompletePackageIsRefused() async throws {
        try writePackage(at: url, members: ["text.txt": "whole", "a.bin": "aaaa", "b.bin": "bbbb"]) { records in
            Self.manifest(version: 2, minReader: 1, minWriter: 1, members: records)
        }
        try Data("half".utf8).write(to: url.appendingPathComponent("a.bin"))  // same size, other bytes
        try FileManager.default.removeItem(at: url.appendingPathComponent("b.bin"))
        let before = try packageContents(url)
        let error = try #require(await refusal(version: 2))
        #expect(error.code == .incompletePackage)
        #expect(error.description.contains("1 of 3 members match"))
        #expect(error.description.contains("“a.bin”") && error.description.contains("“b.bin”"))
        #expect(error.description.contains(url.path))
        #expect(try packageContents(url) == before)
    }

    /// Manifests that must be refused as malformed, and a phrase the error must hold.
    static let malformedManifests: [(text: String?, problem: String)] = [
        (nil, "The package has no manifest"),
        ("{ \"format\" : ", "The manifest is malformed"),
        ("[1, 2]", "must be a JSON object"),
        (#"{"format":"org.documentkit.test.text","formatVersion":"2","writer":{"name":"a","version":"1"},"documentIdentifier":"X"}"#,
         "“formatVersion” must be an integer"),
        (#"{"format":"org.documentkit.test.text","formatVersion":99999999999999999999999,"writer":{"name":"a","version":"1"},"documentIdentifier":"X"}"#,
         "“formatVersion” must be an integer from 1 to 2147483647"),
        (#"{"format":"org.documentkit.test.text","formatVersion":2,"writer":"me","documentIdentifier":"X"}"#,
         "“writer” must be an object"),
        (#"{"format":"org.documentkit.test.text","formatVersion":2,"writer":{"name":"a","version":"1"}}"#,
         "no “documentIdentifier”"),
    ]

    @Test("a malformed or missing manifest is an error naming the file and the problem", arguments: 0..<7)
    func malformedManifest(index: Int) async throws {
        let (text, problem) = Self.malformedManifests[index]
        try writePackage(at: url, members: ["text.txt": "content"]) { _ in text ?? "" }
        if text == nil { try FileManager.default.removeItem(at: url.appendingPathComponent("Info.json")) }
        let before = try packageContents(url)
        let error = try #require(await refusal(version: 2), "the manifest \(text ?? "(none)")")
        #expect(error.code == .corruptData)
        #expect(error.description.contains(url.path + "/Info.json"))
        #expect(error.description.contains(problem), "\(error)")
        #expect(try packageContents(url) == before)
    }

    @Test("reopening a document that was damaged meanwhile loses nothing: the edits stay in memory, the file on disk")
    func reopeningDamagedDocumentLosesNothing() async throws {
        try await VersionedTextDocument(fileURL: url, content: VersionedText(title: "T", text: "saved"), readerVersion: 2).save()
        let document = try await open(version: 2)
        try document.update { $0.text = "unsaved edit" }
        let damaged = Data("{\"format\" : 12".utf8)
        try damaged.write(to: url.appendingPathComponent("Info.json"))
        await #expect(throws: DocumentKitError.self) { try await document.open() }
        #expect(document.content.text == "unsaved edit" && document.hasUnsavedChanges)
        #expect(try Data(contentsOf: url.appendingPathComponent("Info.json")) == damaged)
        // A newer version replaced it meanwhile: same.
        try writePackage(at: url, members: ["text.txt": "v9"]) { records in Self.manifest(version: 9, members: records) }
        let newer = try packageContents(url)
        await #expect(throws: DocumentKitError.self) { try await document.open() }
        #expect(document.content.text == "unsaved edit" && document.hasUnsavedChanges)
        #expect(try packageContents(url) == newer)
    }

    @Test("a migration step that fails refuses the document, naming the step, and nothing changes on disk")
    func failingMigration() async throws {
        try writePackage(at: url, members: ["notes.txt": "no text.txt here"]) { records in
            Self.manifest(version: 2, minReader: 1, minWriter: 1, migrations: #"["2-tags"]"#, members: records)
        }
        let before = try packageContents(url)
        let error = try #require(await refusal(version: 3))
        #expect(error.code == .migrationFailed)
        #expect(error.description.contains("“3-text-md”") && error.description.contains(url.path))
        #expect(try packageContents(url) == before)
    }

    /// 2,000 members keep the test quick; `MemberHashingTests` shows the same with 10,000.
    @Test("saving a large package in which one member changed hashes that member only")
    func largePackageSaveHashesOneMember() async throws {
        var members: [String: String] = ["text.txt": "start"]
        for index in 0..<2_000 { members[String(format: "pages/p%05d.txt", index)] = "page \(index)\n" }
        try writePackage(at: url, members: members) { records in
            Self.manifest(version: 2, minReader: 1, minWriter: 1, migrations: #"["2-tags"]"#, members: records)
        }
        let document = try await open(version: 2, saveOptions: SaveOptions(durability: .consistent))
        let afterOpen = document.hashedMemberCount
        #expect(afterOpen == 2_001)
        try document.update { $0.text = "changed" }
        try await document.save()
        #expect(document.hashedMemberCount - afterOpen == 1)
        try document.update { $0.text = "changed again" }
        try await document.save()
        #expect(document.hashedMemberCount - afterOpen == 2)
        let manifest = try manifestOnDisk()
        #expect(manifest.members?.count == 2_001)
        var hasher = MemberHasher()
        #expect(try hasher.verify(try FileWrapper(contentsOf: url), against: manifest, manifestName: "Info.json", packagePath: url.path).isComplete)
    }
}
