import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The frozen archives of `Formats/archive/v1/fixtures/`: hostile ones are refused as they were
/// the day they were written, valid ones import to exactly their members, and a deterministic
/// export of the same note gives the frozen bytes again.
@Suite struct ArchiveFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/archive/v1/fixtures")

    static func fixture(_ name: String) -> URL { fixtures.appendingPathComponent(name) }

    /// The hostile fixtures: the code each is refused with and the entry named.
    static let hostile: [(name: String, code: DocumentKitError.Code, entry: String)] = [
        ("zip-slip.zip", .unsafeArchiveEntry, "../../evil.txt"),
        ("symlink-escape.tar.gz", .unsafeArchiveEntry, "Trip.note/escape"),
        ("overlapping-entries.zip", .unsafeArchiveEntry, "b.txt"),
    ]

    @Test(arguments: hostile.map(\.name))
    func aHostileFixtureIsRefused(name: String) async throws {
        let expected = try #require(Self.hostile.first { $0.name == name })
        let scene = try Scene("fixture")
        let archive = Self.fixture(name)
        #expect(FileManager.default.fileExists(atPath: archive.path), "the fixture \(name) is missing")
        await expectRefusal(
            of: archive, in: scene, code: expected.code, entry: expected.entry,
            mustStayAbsent: [scene.root.appendingPathComponent("evil.txt").path])
    }

    /// A zip of 16 zips of 16 zips of a MiB of zeros (256 MiB if extracted recursively):
    /// it imports as its 16 plain files, nothing more.
    @Test func theRecursiveBombFixtureImportsAsPlainFiles() async throws {
        let scene = try Scene("fixture")
        let urls = try await DocumentArchiver.importItems(
            from: Self.fixture("recursive-bomb.zip"), into: scene.destination, options: ArchiveImportOptions(durability: .consistent))
        #expect(urls.map(\.lastPathComponent) == ["bomb"])
        var expected = ["keep.txt": "file 5 bytes, 1 links, crc \(CRC32.checksum(Array("mine\n".utf8)))", "bomb": "folder"]
        for index in 0..<16 { expected[String(format: "bomb/level2-%02d.zip", index)] = Self.level2Description }
        #expect(Tree.describe(scene.destination.path) == expected)
    }

    /// Each zip inside the recursive bomb, as the fixture holds it.
    static let level2Description = "file 4662 bytes, 1 links, crc 3345540563"

    @Test(arguments: [ArchiveFormat.zip, .tarGzip])
    func theValidNoteFixtureImportsToExactlyItsMembers(format: ArchiveFormat) async throws {
        let scene = try Scene("fixture")
        let urls = try await DocumentArchiver.importItems(
            from: Self.fixture("Trip.note.\(format.fileExtension)"), into: scene.destination,
            options: ArchiveImportOptions(durability: .consistent))
        #expect(urls.map(\.lastPathComponent) == ["Trip.note"])
        var expected = TripNote.expectedMembers
        expected["keep.txt"] = "file 5 bytes, 1 links, crc \(CRC32.checksum(Array("mine\n".utf8)))"
        #expect(Tree.describe(scene.destination.path) == expected)
        // The permissions came back too.
        let attributes = try FileManager.default.attributesOfItem(atPath: urls[0].appendingPathComponent("body.md").path)
        #expect(attributes[.posixPermissions] as? Int == 0o644)
    }

    /// A deterministic export of the same note, made again today, gives the frozen bytes: the
    /// format (and libarchive's and zlib's output for it) has not drifted.
    @Test(arguments: [ArchiveFormat.zip, .tarGzip])
    func aDeterministicExportGivesTheFrozenBytes(format: ArchiveFormat) async throws {
        let folder = try TemporaryDirectory(prefix: "fixture")
        let package = folder.appending("Trip.note")
        try TripNote.make(at: package)
        let archive = folder.appending("Trip.note.\(format.fileExtension)")
        _ = try await DocumentArchiver.export(
            itemsAt: [package], to: archive, options: ArchiveExportOptions(format: format, isDeterministic: true, durability: .consistent))
        let made = try Data(contentsOf: archive)
        let frozen = try Data(contentsOf: Self.fixture("Trip.note.\(format.fileExtension)"))
        #expect(made == frozen, "\(LibArchive.version): \(made.count) bytes made, \(frozen.count) frozen")
    }

    // MARK: The generator (run once, by hand)

    /// Writes the fixtures that are missing (never one that exists: fixtures are frozen). Run
    /// by hand, once per new fixture:
    /// `DOCUMENTKIT_WRITE_ARCHIVE_FIXTURES=1 swift test --filter ArchiveFixtureTests/writeMissingFixtures`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DOCUMENTKIT_WRITE_ARCHIVE_FIXTURES"] == "1"))
    func writeMissingFixtures() async throws {
        let manager = FileManager.default
        try manager.createDirectory(at: Self.fixtures, withIntermediateDirectories: true)
        let work = try TemporaryDirectory(prefix: "fixture-generator")
        func write(_ name: String, _ make: (URL) async throws -> Void) async throws {
            let url = Self.fixture(name)
            guard !manager.fileExists(atPath: url.path) else {
                print("kept \(name)")
                return
            }
            let made = work.appending(name)
            try await make(made)
            try manager.copyItem(at: made, to: url)
            print("wrote \(name): \(try manager.attributesOfItem(atPath: url.path)[.size] ?? 0) bytes")
        }
        try await write("zip-slip.zip") { url in
            try LibArchiveWriter.write(
                [.folder("Trip.note"), .file("Trip.note/body.md", "# Trip\n"), .file("../../evil.txt", "written outside\n")], to: url,
                container: .zip)
        }
        try await write("symlink-escape.tar.gz") { url in
            try LibArchiveWriter.write(
                [.folder("Trip.note"), .file("Trip.note/body.md", "# Trip\n"), .symbolicLink("Trip.note/escape", to: "../../../etc")],
                to: url, container: .tarGzip)
        }
        try await write("overlapping-entries.zip") { url in
            try Data(ZipBytes.overlapping(names: ["a.txt", "b.txt", "c.txt"], kernel: [UInt8](repeating: 0x61, count: 1_024))).write(to: url)
        }
        try await write("recursive-bomb.zip") { url in
            let level1 = work.appending("level1.zip")
            try LibArchiveWriter.write([.file("zeros.bin", bytes: [UInt8](repeating: 0, count: 1 << 20))], to: level1, container: .zip)
            let level1Bytes = Array(try Data(contentsOf: level1))
            let level2 = work.appending("level2.zip")
            try LibArchiveWriter.write(
                (0..<16).map { .file(String(format: "level1-%02d.zip", $0), bytes: level1Bytes) }, to: level2, container: .zip)
            let level2Bytes = Array(try Data(contentsOf: level2))
            try LibArchiveWriter.write(
                [.folder("bomb")] + (0..<16).map { .file(String(format: "bomb/level2-%02d.zip", $0), bytes: level2Bytes) }, to: url,
                container: .zip)
        }
        for format in [ArchiveFormat.zip, .tarGzip] {
            try await write("Trip.note.\(format.fileExtension)") { url in
                let package = work.appending("Trip.note")
                if !manager.fileExists(atPath: package.path) { try TripNote.make(at: package) }
                _ = try await DocumentArchiver.export(
                    itemsAt: [package], to: url, options: ArchiveExportOptions(format: format, isDeterministic: true, durability: .consistent))
            }
        }
    }
}
