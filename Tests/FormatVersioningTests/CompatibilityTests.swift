import DocumentKitSystem
import Foundation
import FormatVersioning
import Testing

/// Every rule of the table in `Formats/manifest/v1/SPEC.md`, for a reader of sketchbook format 3.
@Suite struct CompatibilityTests {
    let reader = Sketchbook.format()

    @Test("a file in the reader's version with nothing unknown opens read-write")
    func sameVersion() throws {
        var manifest = sampleManifest()
        manifest.additionalFields["title"] = RawJSONValue(string: "Known")
        let outcome = reader.compatibility(of: manifest, at: "/docs/A.sketch")
        guard case .readWrite = outcome else { Issue.record("expected readWrite, got \(outcome)"); return }
        #expect(outcome.allowsReading && outcome.allowsWriting)
        #expect(outcome.message == "It opens for reading and writing.")
    }

    @Test("a newer file that old readers and writers may use opens read-write, preserving what is unknown")
    func newerUsable() throws {
        let manifest = try Fixtures.manifest("hand-made/future-optional-features.json")
        let outcome = reader.compatibility(of: manifest, at: "/docs/Future.sketch")
        guard case .readWritePreservingUnknown(let unknown) = outcome else {
            Issue.record("expected readWritePreservingUnknown, got \(outcome)")
            return
        }
        #expect(unknown == UnrecognizedContent(
            newerFormatVersion: 4, optionalFeatures: ["ink"], fields: ["inkSettings", "preciseScale", "tinyEpsilon", "unicodeéKey"],
            migrations: ["v4-ink-strokes"]))
        #expect(outcome.allowsWriting)
        #expect(outcome.message.contains("the content of format version 4; the optional features “ink”"))
    }

    @Test("minReaderVersion ≤ R < minWriterVersion opens read-only, with a message saying so")
    func readOnly() throws {
        let manifest = try Fixtures.manifest("hand-made/higher-min-writer.json")
        let outcome = reader.compatibility(of: manifest, at: "/docs/Vector.sketch")
        guard case .readOnly(let message) = outcome else { Issue.record("expected readOnly, got \(outcome)"); return }
        #expect(outcome.allowsReading && !outcome.allowsWriting)
        #expect(message == "“/docs/Vector.sketch” was written by sketchbook 5.1.0 in format 5 of “org.documentkit.sketchbook”. "
            + "This app (format 3) can view it but not edit it: changing it needs format 5 or later.")
    }

    @Test("minReaderVersion > R is refused naming the file, its format and versions, and the reader's")
    func newerRefused() throws {
        let manifest = try Fixtures.manifest("hand-made/higher-min-reader.json")
        let outcome = reader.compatibility(of: manifest, at: "/docs/New.sketch")
        guard case .refused(let error) = outcome else { Issue.record("expected refused, got \(outcome)"); return }
        #expect(!outcome.allowsReading)
        #expect(error.code == .newerFormat)
        #expect(error.description == "Couldn't open “/docs/New.sketch”: It was written by a newer version: format 4, this app reads "
            + "up to 3 (“org.documentkit.sketchbook”, written by sketchbook 4.0.0). The original is unchanged.")
    }

    @Test("when minReaderVersion is below formatVersion, the refusal names the reader version the file needs")
    func minimumReaderNamed() {
        let manifest = sampleManifest(version: 6, minimumReader: 5, minimumWriter: 6)
        guard case .refused(let error) = reader.compatibility(of: manifest, at: "/x") else {
            Issue.record("expected refused")
            return
        }
        #expect(error.description.contains("format 6, this app reads up to 3"))
        #expect(error.description.contains("it needs a reader of format 5 or later"))
    }

    @Test("an unknown required feature is refused, whatever the versions")
    func unknownRequiredFeature() throws {
        let manifest = try Fixtures.manifest("hand-made/unknown-required-feature.json")
        guard case .refused(let error) = reader.compatibility(of: manifest, at: "/docs/Secret.sketch") else {
            Issue.record("expected refused")
            return
        }
        #expect(error.code == .newerFormat)
        #expect(error.description.contains("“/docs/Secret.sketch”"))
        #expect(error.description.contains("It needs the feature “encryption”, which this app does not know (format 4, this app reads up to 3"))
        var sameVersion = sampleManifest()
        sameVersion.requiredFeatures = ["layers", "teleport"]
        guard case .refused(let same) = reader.compatibility(of: sameVersion, at: "/y") else {
            Issue.record("expected refused for an unknown required feature in the reader's own version")
            return
        }
        #expect(same.description.contains("the feature “teleport”"))
    }

    @Test("a known required feature and an unknown optional one in the reader's version open read-write, preserving")
    func knownRequiredUnknownOptional() {
        var manifest = sampleManifest()
        manifest.requiredFeatures = ["layers"]
        manifest.optionalFeatures = ["thumbnails"]
        guard case .readWritePreservingUnknown(let unknown) = reader.compatibility(of: manifest, at: "/x") else {
            Issue.record("expected readWritePreservingUnknown")
            return
        }
        #expect(unknown == UnrecognizedContent(optionalFeatures: ["thumbnails"]))
    }

    @Test("an older file needs migration through the steps it hasn't had")
    func older() throws {
        let manifest = try Fixtures.manifest("hand-made/older-without-versions.json")
        let outcome = reader.compatibility(of: manifest, at: "/docs/Old.sketch")
        guard case .needsMigration(let steps) = outcome else { Issue.record("expected needsMigration, got \(outcome)"); return }
        #expect(steps == ["v2-add-tags", "v3-layers-folder"])
        #expect(outcome.allowsWriting)
        #expect(outcome.message.contains("upgraded in memory through “v2-add-tags”, “v3-layers-folder”"))
        #expect(outcome.message.contains("written in the new version at the next save"))
    }

    @Test("an older file needs migration even when no step is registered: only its version changes")
    func olderWithoutSteps() {
        let reader = Sketchbook.format(migrator: FormatMigrator())
        guard case .needsMigration(let steps) = reader.compatibility(of: sampleManifest(version: 2), at: "/x") else {
            Issue.record("expected needsMigration")
            return
        }
        #expect(steps.isEmpty)
    }

    @Test("a file of another format is refused")
    func otherFormat() {
        let manifest = DocumentManifest(formatIdentifier: "org.documentkit.notes", formatVersion: 1, writer: Sketchbook.writer)
        guard case .refused(let error) = reader.compatibility(of: manifest, at: "/docs/A.note") else {
            Issue.record("expected refused")
            return
        }
        #expect(error.code == .unsupportedFormat)
        #expect(error.description.contains("It is in the format “org.documentkit.notes”"))
    }

    @Test("the notes v1 reader keeps its rule: a version-2 file without minimum versions is refused")
    func notesVersionTwoRefusedByVersionOne() {
        let notes = FormatDescription(identifier: "org.documentkit.notes", version: 1)
        let manifest = DocumentManifest(formatIdentifier: "org.documentkit.notes", formatVersion: 2, writer: Sketchbook.writer)
        guard case .refused(let error) = notes.compatibility(of: manifest, at: "/n") else {
            Issue.record("expected refused")
            return
        }
        #expect(error.description.contains("written by a newer version: format 2, this app reads up to 1"))
    }
}
