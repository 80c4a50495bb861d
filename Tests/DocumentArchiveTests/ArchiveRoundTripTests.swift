import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// Export then import: every member comes back byte for byte, in every format this machine has.
@Suite struct ArchiveRoundTripTests {
    /// A package with nested folders, an empty file, a binary file and a link inside it.
    static func makePackage(at url: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: url.appendingPathComponent("attachments/deeper"), withIntermediateDirectories: true)
        try Data("{\"format\":\"x\"}".utf8).write(to: url.appendingPathComponent("Info.json"))
        try Data("# Body\n".utf8).write(to: url.appendingPathComponent("body.md"))
        try Data().write(to: url.appendingPathComponent("attachments/empty"))
        try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }).write(
            to: url.appendingPathComponent("attachments/deeper/blob.bin"))
        try manager.createSymbolicLink(atPath: url.appendingPathComponent("attachments/link").path, withDestinationPath: "deeper/blob.bin")
    }

    /// Every file below `url` by relative path, with its contents (links as "-> target").
    static func snapshot(_ url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let manager = FileManager.default
        let base = url.standardizedFileURL.path
        guard let walker = manager.enumerator(atPath: base) else { return result }
        while let relative = walker.nextObject() as? String {
            let path = base + "/" + relative
            let attributes = try manager.attributesOfItem(atPath: path)
            switch attributes[.type] as? FileAttributeType {
            case .typeSymbolicLink: result[relative] = Data("-> \(try manager.destinationOfSymbolicLink(atPath: path))".utf8)
            case .typeDirectory: result[relative + "/"] = Data()
            default: result[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }

    @Test(arguments: ArchiveFormat.available)
    func exportThenImportGivesEveryMemberBack(format: ArchiveFormat) async throws {
        let folder = try TemporaryDirectory()
        let package = folder.appending("Trip.note")
        try Self.makePackage(at: package)
        let archive = folder.appending("Trip.\(format.fileExtension)")
        // Times in the past, so that an import that did not restore them would be seen.
        for member in ["attachments/deeper/blob.bin", "body.md", "attachments"] {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: package.appendingPathComponent(member).path)
        }
        let summary = try await DocumentArchiver.export(itemsAt: [package], to: archive, options: ArchiveExportOptions(format: format))
        #expect(summary.entryCount == 8)
        #expect(summary.memberBytes == 300_000 + 14 + 7)
        let destination = folder.appending("imported")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        let urls = try await DocumentArchiver.importItems(from: archive, into: destination)
        #expect(urls.map(\.lastPathComponent) == ["Trip.note"])
        #expect(try Self.snapshot(urls[0]) == Self.snapshot(package))
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path) == ["Trip.note"])
        // Modification times come back too (to the second: zip keeps no finer).
        for member in ["attachments/deeper/blob.bin", "body.md", "attachments"] {
            func modified(_ url: URL) throws -> TimeInterval {
                try (FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(member).path)[.modificationDate] as? Date)?
                    .timeIntervalSince1970.rounded(.down) ?? 0
            }
            #expect(abs(try modified(urls[0]) - modified(package)) <= 1, "\(member)")
        }
    }

    @Test func aNameThatIsTakenIsImportedAsACopy() async throws {
        let folder = try TemporaryDirectory()
        let package = folder.appending("Trip.note")
        try Self.makePackage(at: package)
        let archive = folder.appending("Trip.zip")
        _ = try await DocumentArchiver.export(itemsAt: [package], to: archive)
        let first = try await DocumentArchiver.importItems(from: archive, into: folder.url)
        #expect(first.map(\.lastPathComponent) == ["Trip (2).note"])
        await #expect(throws: DocumentKitError.self) {
            try await DocumentArchiver.importItems(from: archive, into: folder.url, options: ArchiveImportOptions(existingItems: .refuse))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["Trip (2).note", "Trip.note", "Trip.zip"])
    }

    @Test(arguments: ArchiveFormat.available)
    func aDeterministicExportGivesTheSameBytes(format: ArchiveFormat) async throws {
        let folder = try TemporaryDirectory()
        let package = folder.appending("Trip.note")
        try Self.makePackage(at: package)
        let options = ArchiveExportOptions(format: format, isDeterministic: true)
        let first = folder.appending("1.\(format.fileExtension)")
        let second = folder.appending("2.\(format.fileExtension)")
        _ = try await DocumentArchiver.export(itemsAt: [package], to: first, options: options)
        // Touch every file: new modification times must not change the bytes.
        try await Task.sleep(for: .milliseconds(20))
        try Data("# Body\n".utf8).write(to: package.appendingPathComponent("body.md"))
        _ = try await DocumentArchiver.export(itemsAt: [package], to: second, options: options)
        #expect(try Data(contentsOf: first) == Data(contentsOf: second))
    }

    @Test func exportAndImportReportTheirProgressUpToTheWhole() async throws {
        let folder = try TemporaryDirectory()
        let package = folder.appending("Trip.note")
        try Self.makePackage(at: package)
        try Data(count: 5 << 20).write(to: package.appendingPathComponent("attachments/large.bin"))
        final class Reports: Sendable {
            let list = Mutex<[ArchiveProgress]>([])
        }
        let exported = Reports()
        let archive = folder.appending("Trip.tar.gz")
        let summary = try await DocumentArchiver.export(
            itemsAt: [package], to: archive, options: ArchiveExportOptions(format: .tarGzip)
        ) { progress in exported.list.withLock { $0.append(progress) } }
        let exportReports = exported.list.withLock { $0 }
        let last = try #require(exportReports.last)
        #expect(last.totalBytes == summary.memberBytes && last.totalEntries == summary.entryCount)
        #expect(last.completedBytes == summary.memberBytes && last.completedEntries == summary.entryCount)
        #expect(last.fractionCompleted == 1)
        #expect(zip(exportReports, exportReports.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        let imported = Reports()
        let destination = folder.appending("in")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        _ = try await DocumentArchiver.importItems(from: archive, into: destination) { progress in
            imported.list.withLock { $0.append(progress) }
        }
        let final = try #require(imported.list.withLock { $0.last })
        #expect(final.completedBytes == summary.memberBytes)
        #expect(final.completedEntries == summary.entryCount)
    }

    @Test func aStagingFolderLeftByAKilledImportIsSweptByTheNextSaveThere() async throws {
        let folder = try TemporaryDirectory()
        let package = folder.appending("Trip.note")
        try Self.makePackage(at: package)
        let archive = folder.appending("Trip.zip")
        _ = try await DocumentArchiver.export(itemsAt: [package], to: archive)
        let destination = folder.appending("in")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        // While the import holds it, its staging folder is locked: a sweep leaves it alone.
        let staged = try await DocumentArchiver.extract(archiveAt: archive, into: destination)
        let stagingName = staged.items[0].url.deletingLastPathComponent().lastPathComponent
        #expect(stagingName.hasPrefix(".Trip.zip.dk-new-"))
        try FileItem.completeInterruptedSaves(inFolderAt: destination)
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path) == [stagingName])
        // What a killed import leaves: the same folder, unlocked (a copy of it, made here).
        let left = destination.appendingPathComponent(".Trip.zip.dk-new-abcdefghijkm")
        try FileManager.default.copyItem(at: staged.items[0].url.deletingLastPathComponent(), to: left)
        staged.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path) == [left.lastPathComponent])
        try FileItem.completeInterruptedSaves(inFolderAt: destination)
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path) == [])
    }

    @Test func anArchiveOfAFolderMadeWithTarDotImportsItsItems() async throws {
        let folder = try TemporaryDirectory()
        let source = folder.appending("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: false)
        try Self.makePackage(at: source.appendingPathComponent("Trip.note"))
        let archive = folder.appending("dot.tar.gz")
        // GNU tar writes "./" first, then "./Trip.note/", …
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-C", source.path, "-czf", archive.path, "."]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        let destination = folder.appending("in")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        let urls = try await DocumentArchiver.importItems(from: archive, into: destination)
        #expect(urls.map(\.lastPathComponent) == ["Trip.note"])
        #expect(try Self.snapshot(urls[0]) == Self.snapshot(source.appendingPathComponent("Trip.note")))
    }
}
