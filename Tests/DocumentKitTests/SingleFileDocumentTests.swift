import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The content of ``ZipTextDocument``: a text and attachments kept as wrappers (never read whole).
struct ZipText: Sendable {
    var text: String
    var attachments: [String: FileWrapper] = [:]
}

/// A document stored as one zip file: `Info.json` (manifest), `text.txt`, `attachments/`.
final class ZipTextDocument: Document<ZipText>, @unchecked Sendable {
    static let zipFormat = FormatDescription(identifier: "org.documentkit.test.zip-text", version: 1)
    override var format: FormatDescription? { Self.zipFormat }
    override var archiveFormat: ArchiveFormat? { .zip }

    override func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> ZipText {
        guard let member = fileWrapper["text.txt"] else { throw CocoaError(.fileReadCorruptFile) }
        return ZipText(
            text: String(decoding: try member.regularFileContents, as: UTF8.self),
            attachments: fileWrapper["attachments"]?.fileWrappers ?? [:])
    }

    override func fileWrapper(for content: ZipText, manifest: inout DocumentManifest, replacing previous: FileWrapper?) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        tree["text.txt"] = FileWrapper(regularFileWithContents: Data(content.text.utf8))
        tree["attachments"] = FileWrapper(directoryWithFileWrappers: content.attachments)
        return tree
    }
}

/// Documents stored as one zip archive: saved atomically as a file, read lazily, unchanged
/// members copied compressed, versions and conflicts as for packages.
@Suite struct SingleFileDocumentTests {
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory(prefix: "single-file") }

    static func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var state = seed
        return Data((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        })
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func makeDocument(_ name: String = "Doc.ztext", attachment: Data? = nil) async throws -> URL {
        let url = folder.appending(name)
        var content = ZipText(text: "first")
        if let attachment { content.attachments["big.bin"] = FileWrapper(regularFileWithContents: attachment) }
        let document = ZipTextDocument(fileURL: url, content: content)
        try await document.save(to: url, for: .saveAs)
        try await document.close()
        return url
    }

    @Test func aSavedDocumentIsOneZipFileThatReadsBack() async throws {
        let url = try await makeDocument(attachment: Self.randomBytes(300_000, seed: 1))
        var isFolder: ObjCBool = true
        #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && !isFolder.boolValue)
        let test = try Self.run(["unzip", "-t", url.path])
        #expect(test.status == 0, "\(test.output)")
        let list = try Self.run(["unzip", "-Z1", url.path])
        #expect(list.output.split(separator: "\n").sorted() == ["Info.json", "attachments/", "attachments/big.bin", "text.txt"])
        let document = ZipTextDocument(fileURL: url)
        try await document.open()
        #expect(document.content.text == "first")
        #expect(document.manifest?.members?["attachments/big.bin"]?.size == 300_000)
        // Reading is lazy: the attachment was not decompressed by the open.
        let attachment = try #require(document.content.attachments["big.bin"])
        #expect(attachment.providedContents?.loaded == nil)
        #expect(try attachment.regularFileContents == Self.randomBytes(300_000, seed: 1))
        try await document.close()
    }

    @Test func aSaveCopiesUnchangedMembersWithoutCompressingThemAgain() async throws {
        let url = try await makeDocument(attachment: Self.randomBytes(200_000, seed: 2))
        // Rewrite the archive with every member stored (not compressed), as another tool might:
        // a member copied by the next save stays stored; one written again would be DEFLATE.
        let script = """
            import sys, zipfile
            src = zipfile.ZipFile(sys.argv[1]); items = [(i, src.read(i.filename)) for i in src.infolist()]; src.close()
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as out:
                for info, data in items:
                    info.compress_type = zipfile.ZIP_STORED; out.writestr(info, data)
            """
        #expect(try Self.run(["python3", "-c", script, url.path]).status == 0)
        let document = ZipTextDocument(fileURL: url)
        try await document.open()
        try document.update { $0.text = "second" }
        try await document.save()
        try await document.close()
        let verbose = try Self.run(["unzip", "-v", url.path]).output
        let methods = Dictionary(
            uniqueKeysWithValues: verbose.split(separator: "\n").compactMap { line -> (String, String)? in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 8, let name = fields.last else { return nil }
                return (String(name), String(fields[1]))
            })
        #expect(methods["attachments/big.bin"] == "Stored", "\(verbose)")
        #expect(methods["text.txt"] == "Defl:N", "\(verbose)")
        #expect(try Self.run(["unzip", "-t", url.path]).status == 0)
        let reopened = ZipTextDocument(fileURL: url)
        try await reopened.open()
        #expect(reopened.content.text == "second")
        #expect(try reopened.content.attachments["big.bin"]?.regularFileContents == Self.randomBytes(200_000, seed: 2))
        try await reopened.close()
    }

    @Test func aSaveOverAFileAnotherWriterChangedFailsAndKeepsBoth() async throws {
        let url = try await makeDocument()
        let first = ZipTextDocument(fileURL: url)
        let second = ZipTextDocument(fileURL: url)
        try await first.open()
        try await second.open()
        try first.update { $0.text = "from first" }
        try await first.save()
        try second.update { $0.text = "from second" }
        await #expect(throws: DocumentKitError.self) { try await second.save() }
        #expect(second.content.text == "from second")
        let check = ZipTextDocument(fileURL: url)
        try await check.open()
        #expect(check.content.text == "from first")
        for document in [first, check] { try await document.close() }
        try await second.close(discardingChanges: true)
    }

    @Test func theVersionStoreKeepsTheReplacedArchive() async throws {
        let url = try await makeDocument()
        let store = VersionStore(libraryURL: folder.url, pruning: .keepAll)
        let document = ZipTextDocument(fileURL: url)
        document.versionStore = store
        try await document.open()
        try document.update { $0.text = "second" }
        try await document.save()
        try await document.close()
        let versions = try store.otherVersions(ofItemAt: url)
        #expect(versions.count >= 1)
        let old = try #require(versions.first)
        let reading = ZipTextDocument(fileURL: old.url)
        try await reading.open()
        #expect(reading.content.text == "first")
        try await reading.close()
    }

    @Test func aDamagedOrForeignFileIsRefusedNamingIt() async throws {
        let url = try await makeDocument(attachment: Self.randomBytes(50_000, seed: 3))
        var bytes = try Data(contentsOf: url)
        bytes.removeLast(10)  // the end of the central directory record
        try bytes.write(to: url)
        let damaged = ZipTextDocument(fileURL: url)
        await #expect {
            try await damaged.open()
        } throws: { error in
            let error = error as? DocumentKitError
            return error?.code == .corruptData && "\(error!)".contains(url.path)
        }
        let text = folder.appending("Plain.ztext")
        try Data("not a zip".utf8).write(to: text)
        let foreign = ZipTextDocument(fileURL: text)
        await #expect(throws: DocumentKitError.self) { try await foreign.open() }
        let package = folder.appending("Package.ztext")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: false)
        let folderDocument = ZipTextDocument(fileURL: package)
        await #expect {
            try await folderDocument.open()
        } throws: { error in
            (error as? DocumentKitError)?.code == .unsupportedFormat
        }
    }
}

/// ``VersionedTextDocument`` stored as one zip file: the format rules through an archive.
final class ZipVersionedTextDocument: VersionedTextDocument, @unchecked Sendable {
    override var archiveFormat: ArchiveFormat? { .zip }
}

@Suite struct SingleFileFormatTests {
    @Test func anOlderSingleFileDocumentIsMigratedAndAStoredNewerOneIsRefusedUntouched() async throws {
        let folder = try TemporaryDirectory(prefix: "single-file-format")
        let old = folder.appending("Old.ztext")
        let v1 = ZipVersionedTextDocument(fileURL: old, content: VersionedText(title: "T", text: "hello"), readerVersion: 1)
        try await v1.save(to: old, for: .saveAs)
        try await v1.close()
        // The reader of version 3 migrates it (text.txt becomes text.md) and writes version 3 at its save.
        let v3 = ZipVersionedTextDocument(fileURL: old, readerVersion: 3)
        try await v3.open()
        #expect(v3.content.text == "hello")
        try v3.update { $0.text = "hello again" }
        try await v3.save()
        try await v3.close()
        let tree = try SingleFileArchive.expand(try FileWrapper(contentsOf: old), at: old)
        #expect(tree["text.md"] != nil && tree["text.txt"] == nil)
        let manifest = try DocumentManifest(package: tree, manifestName: VersionedTextDocument.format(version: 3).manifestName, packagePath: old.path)
        #expect(manifest.formatVersion == 3)
        // Now too new for the reader of version 1: refused, and the file is left as it was.
        let bytes = try Data(contentsOf: old)
        let reader = ZipVersionedTextDocument(fileURL: old, readerVersion: 1)
        await #expect {
            try await reader.open()
        } throws: { error in
            (error as? DocumentKitError)?.code == .newerFormat
        }
        #expect(try Data(contentsOf: old) == bytes)
    }
}

@Suite struct SingleFileExternalChangeTests {
    @Test func aPresentingSingleFileDocumentReloadsWhenAnotherProgramReplacesIt() async throws {
        let namespaceFolder = try TemporaryDirectory(prefix: "single-file-ns")
        let folder = try TemporaryDirectory(prefix: "single-file-items")
        let coordinator = FileCoordinator(namespace: try CoordinationNamespace(directory: namespaceFolder.url, packageExtensions: []))
        let url = folder.appending("Doc.ztext")
        let other = folder.appending("Other.ztext")
        for (target, text) in [(url, "mine"), (other, "theirs")] {
            let document = ZipTextDocument(fileURL: target, content: ZipText(text: text))
            try await document.save(to: target, for: .saveAs)
            try await document.close()
        }
        let document = ZipTextDocument(fileURL: url, coordinator: coordinator)
        document.autosavePolicy = nil
        try await document.open()
        let events = EventRecorder(document)
        // Another program puts a whole new zip in its place, as a sync engine does.
        try shell("mv \(quoted(other)) \(quoted(url))")
        #expect(await events.wait(for: isReloaded))
        for _ in 0..<500 where document.content.text != "theirs" { try await Task.sleep(for: .milliseconds(10)) }
        #expect(document.content.text == "theirs")
        #expect(!document.hasUnsavedChanges)
        try await document.close()
    }
}
