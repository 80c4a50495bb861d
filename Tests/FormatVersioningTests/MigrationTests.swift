import DocumentKitSystem
import FilePackages
import Foundation
import FormatVersioning
import Synchronization
import Testing

@Suite struct MigrationTests {
    struct StepFailed: Error {}

    @Test("steps run in registration order, each recorded as applied, on the tree and the manifest")
    func order() throws {
        let log = Mutex<[String]>([])
        var migrator = FormatMigrator()
        for identifier in ["v2-a", "v3-b", "v4-c"] {
            migrator.registerMigration(identifier) { document in
                log.withLock { $0.append(identifier) }
                document.fileWrapper[identifier + ".txt"] = file(document.manifest.appliedMigrations.joined(separator: ","))
            }
        }
        var manifest = sampleManifest(version: 1)
        manifest.appliedMigrations = []
        var document = MigratingDocument(fileWrapper: FileWrapper(directoryWithFileWrappers: [:]), manifest: manifest)
        let ran = try migrator.migrate(&document, at: "/docs/A.sketch")
        #expect(ran == ["v2-a", "v3-b", "v4-c"])
        #expect(log.withLock { $0 } == ["v2-a", "v3-b", "v4-c"])
        #expect(document.manifest.appliedMigrations == ["v2-a", "v3-b", "v4-c"])
        // Each step saw the ones before it recorded.
        #expect(try document.fileWrapper["v4-c.txt"]?.regularFileContents == Data("v2-a,v3-b".utf8))
        #expect(document.keepsOriginalOnNextSave)
        #expect(document.originalFormatVersion == 1)
        // A second run has nothing to do.
        #expect(try migrator.migrate(&document, at: "/docs/A.sketch").isEmpty)
        #expect(log.withLock { $0 }.count == 3)
    }

    @Test("too old and too new are both answerable")
    func tooOldAndTooNew() throws {
        let migrator = Sketchbook.migrator()
        var old = sampleManifest(version: 1)
        old.appliedMigrations = ["v2-add-tags"]
        #expect(!migrator.hasCompletedMigrations(old))
        #expect(!migrator.hasBeenSuperseded(old))
        #expect(migrator.appliedMigrations(of: old) == ["v2-add-tags"])
        #expect(migrator.pendingMigrations(for: old) == ["v3-layers-folder"])

        let current = sampleManifest(version: 3)
        #expect(migrator.hasCompletedMigrations(current))
        #expect(!migrator.hasBeenSuperseded(current))

        let future = try Fixtures.manifest("hand-made/future-optional-features.json")
        #expect(migrator.hasCompletedMigrations(future))
        #expect(migrator.hasBeenSuperseded(future))
        #expect(migrator.unknownMigrations(of: future) == ["v4-ink-strokes"])
        #expect(migrator.appliedMigrations(of: future) == ["v2-add-tags", "v3-layers-folder"])
    }

    @Test("a step missing in the middle of the applied list runs, and only it")
    func gap() throws {
        let ran = Mutex<[String]>([])
        var migrator = FormatMigrator()
        for identifier in ["a", "b", "c"] {
            migrator.registerMigration(identifier) { _ in ran.withLock { $0.append(identifier) } }
        }
        var manifest = sampleManifest()
        manifest.appliedMigrations = ["a", "c"]
        var document = MigratingDocument(fileWrapper: FileWrapper(directoryWithFileWrappers: [:]), manifest: manifest)
        try migrator.migrate(&document, at: "/x")
        #expect(ran.withLock { $0 } == ["b"])
        #expect(document.manifest.appliedMigrations == ["a", "c", "b"])
    }

    @Test("a failing step leaves the document as it was, and the error names the file and the step")
    func failure() throws {
        var migrator = FormatMigrator()
        migrator.registerMigration("v2-fine") { document in document.fileWrapper["new.txt"] = file("x") }
        migrator.registerMigration("v3-broken") { _ in throw StepFailed() }
        var manifest = sampleManifest(version: 1)
        manifest.appliedMigrations = []
        let before = MigratingDocument(fileWrapper: FileWrapper(directoryWithFileWrappers: [:]), manifest: manifest)
        var document = before
        let error = #expect(throws: DocumentKitError.self) { try migrator.migrate(&document, at: "/docs/Old.sketch") }
        #expect(error?.code == .migrationFailed)
        #expect(error?.description.contains("Couldn't open “/docs/Old.sketch”: migrating it with “v3-broken” failed") == true)
        #expect(error?.description.contains("StepFailed") == true)
        #expect(document.manifest == before.manifest)
        #expect(document.fileWrapper == before.fileWrapper)
        #expect(!document.keepsOriginalOnNextSave)
    }

    @Test("the format brings an older file to its version in memory and asks the next save to keep the original")
    func formatMigration() throws {
        let format = Sketchbook.format()
        let old = try Fixtures.manifest("hand-made/older-without-versions.json")
        var document = MigratingDocument(fileWrapper: FileWrapper(directoryWithFileWrappers: ["body.md": file("old")]), manifest: old)
        try format.migrate(&document, at: "/docs/Old.sketch")
        #expect(document.manifest.formatVersion == 3)
        #expect(document.manifest.minimumReaderVersion == 2)
        #expect(document.manifest.minimumWriterVersion == 3)
        #expect(document.manifest.appliedMigrations == ["v2-add-tags", "v3-layers-folder"])
        #expect(document.manifest.additionalFields["tags"]?.jsonText == "[]")
        #expect(document.manifest.additionalFields["title"] == old.additionalFields["title"])
        #expect(document.fileWrapper["layers"]?.isDirectory == true)
        #expect(document.keepsOriginalOnNextSave)
        #expect(document.originalFormatVersion == 1)
        // The result is what this app would write, so it opens read-write.
        guard case .readWrite = format.compatibility(of: document.manifest, at: "/docs/Old.sketch") else {
            Issue.record("a migrated manifest should open read-write")
            return
        }
    }

    @Test("a file in the reader's version, or a newer one, is left alone by the format's migration")
    func nothingToMigrate() throws {
        let format = Sketchbook.format()
        for manifest in [sampleManifest(), try Fixtures.manifest("hand-made/future-optional-features.json")] {
            var document = MigratingDocument(fileWrapper: FileWrapper(directoryWithFileWrappers: [:]), manifest: manifest)
            try format.migrate(&document, at: "/x")
            #expect(document.manifest == manifest)
            #expect(!document.keepsOriginalOnNextSave)
            #expect(document.originalFormatVersion == nil)
        }
    }

    @Test("a new document's manifest counts every registered step as applied")
    func newDocument() {
        let manifest = Sketchbook.format().makeManifest(writer: Sketchbook.writer)
        #expect(manifest.appliedMigrations == ["v2-add-tags", "v3-layers-folder"])
        #expect(manifest.formatVersion == 3 && manifest.minimumReaderVersion == 2 && manifest.minimumWriterVersion == 3)
        #expect(UUID(uuidString: manifest.documentIdentifier) != nil)
    }
}
