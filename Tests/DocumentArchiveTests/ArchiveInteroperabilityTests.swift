import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Archives made by other tools import member by member, byte for byte; archives DocumentKit
/// exports pass those tools' checks and extract to the same bytes with them.
///
/// Every archive is made or checked by a real process: Info-ZIP's `zip` and `unzip`, GNU `tar`
/// (with `gzip`, `zstd`, `xz`), `bsdtar` (libarchive-tools) and Python's `zipfile`. A missing
/// tool fails the test that needs it, naming the Debian package to install
/// (`Scripts/bootstrap.sh test`, which `make test` runs, installs them all). The tools run
/// with `LC_ALL=C.UTF-8`, as in a user's UTF-8 locale: Info-ZIP maps non-ASCII names by locale.
/// DocumentKit's exports run in a child process (an exit test), so that a crash inside
/// libarchive fails the test that caused it instead of ending the whole test run.
@Suite(.timeLimit(.minutes(10)))
struct ArchiveInteroperabilityTests {
    // MARK: - Archives made by other tools

    /// An archive of the fixture made by another tool, as a user would make it.
    enum ForeignArchive: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `zip -r -y` (Info-ZIP; `-y` stores symbolic links as links).
        case infoZip
        /// `zip -r -y -0`: every member stored, none compressed.
        case infoZipStored
        /// `zip -r - Trip.note | cat > archive`: written to a pipe, so sizes and CRCs follow the
        /// data (data descriptors). Without `-y` (Info-ZIP refuses to store a link to a pipe):
        /// the symbolic link is archived as the file it points to.
        case infoZipToPipe
        /// GNU `tar -czf` (GNU format: long names as `././@LongLink` entries, hard links).
        case gnuTarGzip
        /// GNU `tar -S -czf`: files with holes as GNU sparse entries (old GNU headers).
        case gnuTarGzipSparse
        /// GNU `tar --format=posix -S -czf`: pax headers; files with holes as pax sparse entries.
        case gnuTarPaxSparse
        /// GNU `tar -cf`: no compression.
        case gnuTarPlain
        /// GNU `tar --zstd -cf`.
        case gnuTarZstd
        /// GNU `tar -cJf` (xz).
        case gnuTarXz
        /// `bsdtar -czf` (pax; files with holes as sparse entries, the holes read from the disk).
        case bsdtarGzip
        /// `bsdtar --zstd -cf`.
        case bsdtarZstd
        /// `bsdtar -cJf`.
        case bsdtarXz
        /// `bsdtar --format zip -cf`.
        case bsdtarZip
        /// Python `zipfile`, `ZIP_STORED`.
        case pythonStored
        /// Python `zipfile`, `ZIP_DEFLATED`.
        case pythonDeflated
        /// Python `zipfile`, `ZIP_BZIP2`.
        case pythonBzip2
        /// Python `zipfile`, `ZIP_LZMA`.
        case pythonLzma
        /// Python `zipfile`, `ZIP_DEFLATED`, files only: no folder entries (folders are implied).
        case pythonDeflatedWithoutFolders
        /// Python `zipfile`, `ZIP_DEFLATED`, every file written with `open(..., 'w', force_zip64=True)`
        /// (a zip64 extra field in each local header).
        case pythonForcedZip64
        /// Python `zipfile` writing `ZIP_DEFLATED` to a pipe (data descriptors).
        case pythonDeflatedToPipe

        var testDescription: String { rawValue }

        var tools: [Tool] {
            switch self {
            case .infoZip, .infoZipStored, .infoZipToPipe: [.zip]
            case .gnuTarGzip, .gnuTarGzipSparse, .gnuTarPaxSparse: [.tar, .gzip]
            case .gnuTarPlain: [.tar]
            case .gnuTarZstd: [.tar, .zstd]
            case .gnuTarXz: [.tar, .xz]
            case .bsdtarGzip, .bsdtarZstd, .bsdtarXz, .bsdtarZip: [.bsdtar]
            case .pythonStored, .pythonDeflated, .pythonBzip2, .pythonLzma, .pythonDeflatedWithoutFolders, .pythonForcedZip64,
                .pythonDeflatedToPipe:
                [.python3]
            }
        }

        var fileName: String {
            switch self {
            case .infoZip, .infoZipStored, .infoZipToPipe, .bsdtarZip, .pythonStored, .pythonDeflated, .pythonBzip2, .pythonLzma,
                .pythonDeflatedWithoutFolders, .pythonForcedZip64, .pythonDeflatedToPipe:
                "Trip.zip"
            case .gnuTarGzip, .gnuTarGzipSparse, .gnuTarPaxSparse, .bsdtarGzip: "Trip.tar.gz"
            case .gnuTarPlain: "Trip.tar"
            case .gnuTarZstd, .bsdtarZstd: "Trip.tar.zst"
            case .gnuTarXz, .bsdtarXz: "Trip.tar.xz"
            }
        }

        /// Whether the archive has an entry for every folder (else folders are implied by the
        /// files in them, and an empty folder is not in the archive).
        var hasFolderEntries: Bool { self != .pythonDeflatedWithoutFolders }

        /// Whether the tool archives what a symbolic link points to instead of the link.
        var followsLinks: Bool { self == .infoZipToPipe }

        /// Makes the archive `archive` of `Trip.note` in `source`.
        func make(_ archive: URL, from source: URL, runner: ToolRunner) async throws -> ToolRun {
            let path = archive.path
            func python(_ path: String, _ method: String, _ variant: String) async throws -> ToolRun {
                try await runner.run(.python3, ["-c", Self.pythonZipScript, path, method, variant, Fixture.name], in: source)
            }
            switch self {
            case .infoZip: return try await runner.run(.zip, ["-r", "-y", "-q", path, Fixture.name], in: source)
            case .infoZipStored: return try await runner.run(.zip, ["-r", "-y", "-q", "-0", path, Fixture.name], in: source)
            case .infoZipToPipe:
                return try await runner.run(.zip, ["-r", "-q", "-", Fixture.name], in: source, standardOutput: archive, throughPipe: true)
            case .gnuTarGzip: return try await runner.run(.tar, ["-czf", path, Fixture.name], in: source)
            case .gnuTarGzipSparse: return try await runner.run(.tar, ["-S", "-czf", path, Fixture.name], in: source)
            case .gnuTarPaxSparse: return try await runner.run(.tar, ["--format=posix", "-S", "-czf", path, Fixture.name], in: source)
            case .gnuTarPlain: return try await runner.run(.tar, ["-cf", path, Fixture.name], in: source)
            case .gnuTarZstd: return try await runner.run(.tar, ["--zstd", "-cf", path, Fixture.name], in: source)
            case .gnuTarXz: return try await runner.run(.tar, ["-cJf", path, Fixture.name], in: source)
            case .bsdtarGzip: return try await runner.run(.bsdtar, ["-czf", path, Fixture.name], in: source)
            case .bsdtarZstd: return try await runner.run(.bsdtar, ["--zstd", "-cf", path, Fixture.name], in: source)
            case .bsdtarXz: return try await runner.run(.bsdtar, ["-cJf", path, Fixture.name], in: source)
            case .bsdtarZip: return try await runner.run(.bsdtar, ["--format", "zip", "-cf", path, Fixture.name], in: source)
            case .pythonStored: return try await python(path, "stored", "folders")
            case .pythonDeflated: return try await python(path, "deflated", "folders")
            case .pythonBzip2: return try await python(path, "bzip2", "folders")
            case .pythonLzma: return try await python(path, "lzma", "folders")
            case .pythonDeflatedWithoutFolders: return try await python(path, "deflated", "files-only")
            case .pythonForcedZip64: return try await python(path, "deflated", "zip64")
            case .pythonDeflatedToPipe:
                return try await runner.run(
                    .python3, ["-c", Self.pythonZipScript, "-", "deflated", "folders", Fixture.name], in: source, standardOutput: archive,
                    throughPipe: true)
            }
        }

        /// Zips a folder the way a Python script would: `os.walk`, `ZipFile.write`; symbolic
        /// links as Unix link entries (mode 0o120777 in the external attributes, the target as
        /// data), as Info-ZIP stores them. Arguments: OUTPUT (`-` for standard output, a pipe),
        /// METHOD, VARIANT (folders, files-only, zip64), FOLDER.
        static let pythonZipScript = """
            import os, shutil, sys, zipfile
            out, method, variant, root = sys.argv[1:5]
            compression = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED,
                           "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}[method]
            target = sys.stdout.buffer if out == "-" else out
            with zipfile.ZipFile(target, "w", compression=compression) as zf:
                for folder, folders, files in os.walk(root):
                    folders.sort()
                    if variant != "files-only":
                        zf.write(folder)
                    for name in sorted(files + [f for f in folders if os.path.islink(os.path.join(folder, f))]):
                        path = os.path.join(folder, name)
                        if os.path.islink(path):
                            info = zipfile.ZipInfo(path)
                            info.create_system = 3
                            info.external_attr = 0o120777 << 16
                            zf.writestr(info, os.readlink(path))
                        elif variant == "zip64":
                            info = zipfile.ZipInfo.from_file(path)
                            info.compress_type = compression
                            with open(path, "rb") as source, zf.open(info, "w", force_zip64=True) as sink:
                                shutil.copyfileobj(source, sink)
                        else:
                            zf.write(path)
            """

        /// Checks the archive has what makes this case what it says, so that the test tests it.
        func checkShape(of archive: URL) throws {
            switch self {
            case .infoZipToPipe, .pythonDeflatedToPipe:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                let files = headers.filter { $0.externalMode & 0o170000 == 0o100000 }
                #expect(!files.isEmpty && files.allSatisfy { $0.flags & 0x0008 != 0 }, "\(self): expected data descriptors (flag bit 3) on every file entry")
            case .pythonForcedZip64:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                let files = headers.filter { $0.externalMode & 0o170000 == 0o100000 }
                #expect(!files.isEmpty && files.allSatisfy { $0.localExtraIDs.contains(0x0001) }, "\(self): expected a zip64 extra field in every file's local header")
            case .infoZipStored, .pythonStored:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                #expect(headers.allSatisfy { $0.method == 0 }, "\(self): expected every entry stored (method 0)")
            case .pythonBzip2:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                #expect(headers.contains { $0.method == 12 }, "\(self): expected bzip2 entries (method 12)")
            case .pythonLzma:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                #expect(headers.contains { $0.method == 14 }, "\(self): expected LZMA entries (method 14)")
            case .pythonDeflatedWithoutFolders:
                let headers = try ZipInspection(Data(contentsOf: archive)).localHeaders()
                #expect(!headers.contains { $0.name.hasSuffix("/") }, "\(self): expected no folder entries")
            default: break
            }
        }
    }

    /// The `core` fixture archived by each tool imports with every member the same: bytes,
    /// links, empty folders, the executable bit.
    @Test(arguments: ForeignArchive.allCases)
    func anArchiveMadeByAnotherToolImportsByteForByte(_ maker: ForeignArchive) async throws {
        guard let runner = ToolRunner(requiring: maker.tools) else { return }
        let folder = try TemporaryDirectory(prefix: "archive-interop")
        let source = folder.appending("source")
        let expected = try Fixture.make(in: source)
        let archive = folder.appending(maker.fileName)
        let made = try await maker.make(archive, from: source, runner: runner)
        guard made.succeeded(maker.rawValue) else { return }
        try maker.checkShape(of: archive)
        var wanted = maker.hasFolderEntries ? expected : Fixture.withoutEmptyFolders(expected)
        if maker.followsLinks { wanted = Fixture.withLinksFollowed(wanted) }
        try await Self.importAndCompare(archive, expected: wanted, what: "\(maker) (\(maker.fileName))", in: folder)
    }

    /// Names in UTF-8 beyond ASCII, as each tool stores them: Info-ZIP as raw bytes (no UTF-8
    /// flag), Python and bsdtar's zip with the UTF-8 flag (bit 11), GNU tar's GNU format as raw
    /// bytes, pax (GNU tar, bsdtar) in UTF-8 `path` records.
    @Test(arguments: [ForeignArchive.infoZip, .pythonDeflated, .bsdtarZip, .gnuTarGzip, .gnuTarPaxSparse, .bsdtarGzip])
    func nonASCIINamesFromAnotherToolImport(_ maker: ForeignArchive) async throws {
        guard let runner = ToolRunner(requiring: maker.tools) else { return }
        let folder = try TemporaryDirectory(prefix: "archive-interop")
        let source = folder.appending("source")
        let expected = try Fixture.make(.nonASCIINames, in: source)
        let archive = folder.appending(maker.fileName)
        guard try await maker.make(archive, from: source, runner: runner).succeeded(maker.rawValue) else { return }
        try await Self.importAndCompare(archive, expected: expected, what: "\(maker) (\(maker.fileName)), non-ASCII names", in: folder)
    }

    /// Files with holes, archived as sparse entries: GNU tar's old GNU sparse headers (`-S`), its
    /// pax sparse format (`--format=posix -S`), bsdtar's (which reads the holes itself). The
    /// holes must come back as zeros, at the start, in the middle and at the end of a file.
    @Test(arguments: [ForeignArchive.gnuTarGzipSparse, .gnuTarPaxSparse, .bsdtarGzip])
    func sparseFilesFromAnotherToolImport(_ maker: ForeignArchive) async throws {
        guard let runner = ToolRunner(requiring: maker.tools + [.gzip]) else { return }
        let folder = try TemporaryDirectory(prefix: "archive-interop")
        let source = folder.appending("source")
        let expected = try Fixture.make(.sparse, in: source)
        let archive = folder.appending(maker.fileName)
        guard try await maker.make(archive, from: source, runner: runner).succeeded(maker.rawValue) else { return }
        // The archive must hold sparse entries, else this tests nothing.
        let tarURL = folder.appending("Trip.tar")
        let tar = try await runner.run(.gzip, ["-d", "-c", archive.path], in: folder.url, standardOutput: tarURL)
        guard tar.succeeded("gzip -d") else { return }
        let bytes = try Data(contentsOf: tarURL)
        switch maker {
        case .gnuTarGzipSparse:
            // A ustar header block named Trip.note/sparse-ends.img of type 'S' (old GNU sparse).
            let name = Array("\(Fixture.name)/sparse-ends.img".utf8)
            let sparseHeader = stride(from: 0, to: bytes.count - 512, by: 512).contains { start in
                bytes[start..<start + name.count].elementsEqual(name) && bytes[start + name.count] == 0 && bytes[start + 156] == UInt8(ascii: "S")
            }
            #expect(sparseHeader, "\(maker): no GNU sparse header (type S) for sparse-ends.img: the file has no holes here?")
        default:
            #expect(bytes.range(of: Data("GNU.sparse.".utf8)) != nil, "\(maker): no GNU.sparse pax records: the files have no holes here?")
        }
        try await Self.importAndCompare(archive, expected: expected, what: "\(maker) (\(maker.fileName)), sparse files", in: folder)
    }

    /// 65,536 entries: more than a zip's end record can count, so Python writes the zip64 end
    /// record and its locator (the count 0xFFFF in the classic record).
    @Test func aZip64ArchiveOfManyEntriesFromPythonImports() async throws {
        guard let runner = ToolRunner(requiring: [.python3]) else { return }
        // On a tmpfs where there is one: creating 65,536 files on this machine's ext4 (no
        // journal) takes 30 to 90 s, nearly all of it the allocator skipping recently deleted
        // inodes (`recently_deleted` in a profile), nothing of the import's own.
        let shared = URL(fileURLWithPath: "/dev/shm")
        let folder = try TemporaryDirectory(
            prefix: "archive-interop", in: FileManager.default.isWritableFile(atPath: shared.path) ? shared : nil)
        let archive = folder.appending("Many.zip")
        let count = 65_536
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as zf:
                for i in range(int(sys.argv[2])):
                    zf.writestr(f"Many.note/d{i // 256:03d}/m{i:05d}.txt", f"member {i}\\n")
            """
        let made = try await runner.run(.python3, ["-c", script, archive.path, String(count)], in: folder.url)
        guard made.succeeded("python zipfile, \(count) entries") else { return }
        let inspection = try ZipInspection(Data(contentsOf: archive))
        #expect(inspection.hasZip64EndRecord, "Python did not write a zip64 end record: the test does not test it")
        let destination = folder.appending("imported")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        let urls = try await DocumentArchiver.importItems(
            from: archive, into: destination, options: ArchiveImportOptions(durability: .consistent))
        #expect(urls.map(\.lastPathComponent) == ["Many.note"])
        var seen = 0
        var wrong: [String] = []
        for folderIndex in 0..<(count / 256) {
            let subfolder = destination.appendingPathComponent(String(format: "Many.note/d%03d", folderIndex))
            let names = try FileManager.default.contentsOfDirectory(atPath: subfolder.path)
            if names.count != 256 { wrong.append("\(subfolder.lastPathComponent) holds \(names.count) items, not 256") }
            for name in names {
                guard name.hasPrefix("m"), name.hasSuffix(".txt"), let index = Int(name.dropFirst().dropLast(4)) else {
                    wrong.append("unexpected \(subfolder.lastPathComponent)/\(name)")
                    continue
                }
                let data = try Data(contentsOf: subfolder.appendingPathComponent(name))
                if data != Data("member \(index)\n".utf8) { wrong.append("\(subfolder.lastPathComponent)/\(name) holds other bytes") }
                seen += 1
            }
        }
        #expect(seen == count)
        #expect(wrong.isEmpty, "\(wrong.count) members wrong, the first: \(wrong.prefix(5))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path) == ["Many.note"])
    }

    // MARK: - Archives DocumentKit exports, checked by other tools

    /// One tool's check of an archive DocumentKit exported.
    enum ExportCheck: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `unzip -t`, `unzip -Z1` (the names), `unzip -d` (the bytes).
        case zipWithUnzip
        /// `bsdtar -tf`, `bsdtar -xf`.
        case zipWithBsdtar
        /// Python: `ZipFile.testzip()` is None, then every entry read with `ZipFile.read`.
        case zipWithPython
        /// `gzip -t -q`, GNU `tar -tzf`, `tar -xzf`.
        case tarGzipWithGNUTar
        case tarGzipWithBsdtar
        /// `zstd -t -q`, GNU `tar --zstd -tf`, `tar --zstd -xf`.
        case tarZstdWithGNUTar
        case tarZstdWithBsdtar
        /// `xz -t -q`, GNU `tar -tJf`, `tar -xJf`.
        case tarXzWithGNUTar
        case tarXzWithBsdtar

        var testDescription: String { rawValue }

        var format: ArchiveFormat {
            switch self {
            case .zipWithUnzip, .zipWithBsdtar, .zipWithPython: .zip
            case .tarGzipWithGNUTar, .tarGzipWithBsdtar: .tarGzip
            case .tarZstdWithGNUTar, .tarZstdWithBsdtar: .tarZstd
            case .tarXzWithGNUTar, .tarXzWithBsdtar: .tarXz
            }
        }

        var tools: [Tool] {
            switch self {
            case .zipWithUnzip: [.unzip]
            case .zipWithBsdtar, .tarGzipWithBsdtar, .tarZstdWithBsdtar, .tarXzWithBsdtar: [.bsdtar]
            case .zipWithPython: [.python3]
            case .tarGzipWithGNUTar: [.tar, .gzip]
            case .tarZstdWithGNUTar: [.tar, .zstd]
            case .tarXzWithGNUTar: [.tar, .xz]
            }
        }
    }

    @Test(arguments: ExportCheck.allCases, [false, true])
    func anExportedArchivePassesTheToolAndExtractsTheSame(_ check: ExportCheck, deterministic: Bool) async throws {
        try await Self.exportAndCheck(.core, with: check, deterministic: deterministic)
    }

    /// Names in UTF-8 that are not ASCII ("café ☕ notes.txt", "日本語/メモ.md"): each tool must
    /// show and extract them under the same names.
    @Test(arguments: ExportCheck.allCases)
    func anExportedArchiveOfNonASCIINamesPassesTheToolAndExtractsTheSame(_ check: ExportCheck) async throws {
        try await Self.exportAndCheck(.nonASCIINames, with: check, deterministic: false)
    }

    /// Exports the fixture `kind` (in a child process), then runs `check`'s tool on the archive:
    /// its own test, its listing, and an extraction compared member by member with the fixture.
    static func exportAndCheck(_ kind: Fixture.Kind, with check: ExportCheck, deterministic: Bool) async throws {
        guard let runner = ToolRunner(requiring: check.tools) else { return }
        guard check.format.isAvailable else {
            Issue.record("This libarchive cannot write \(check.format) (\(LibArchive.version)): install a libarchive built with it (Debian: libarchive-dev)")
            return
        }
        let folder = try TemporaryDirectory(prefix: "archive-interop")
        let source = folder.appending("source")
        let expected = try Fixture.make(kind, in: source)
        let archive = folder.appending("Trip.\(check.format.fileExtension)")
        let what = "\(check) of our \(check.format) export of the \(kind) fixture\(deterministic ? " (deterministic)" : "")"
        guard await exportInChildProcess(
            source.appendingPathComponent(Fixture.name), to: archive, format: check.format, deterministic: deterministic, what: what)
        else { return }
        let out = folder.appending("extracted")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let names = Set(expected.keys)

        switch check {
        case .zipWithUnzip:
            let test = try await runner.run(.unzip, ["-t", archive.path], in: folder.url)
            guard test.succeeded("\(what): unzip -t") else { return }
            #expect(test.output.contains("No errors detected"), "\(what): unzip -t said: \(test.output)")
            let list = try await runner.run(.unzip, ["-Z1", archive.path], in: folder.url)
            guard list.succeeded("\(what): unzip -Z1") else { return }
            expectListing(list.output, equals: names, what)
            let extract = try await runner.run(.unzip, ["-q", archive.path, "-d", out.path], in: folder.url)
            guard extract.succeeded("\(what): unzip -d", quiet: true) else { return }
        case .zipWithBsdtar, .tarGzipWithBsdtar, .tarZstdWithBsdtar, .tarXzWithBsdtar:
            let list = try await runner.run(.bsdtar, ["-tf", archive.path], in: folder.url)
            guard list.succeeded("\(what): bsdtar -tf", quiet: true) else { return }
            expectListing(list.output, equals: names, what)
            let extract = try await runner.run(.bsdtar, ["-xf", archive.path, "-C", out.path], in: folder.url)
            guard extract.succeeded("\(what): bsdtar -xf", quiet: true) else { return }
        case .tarGzipWithGNUTar, .tarZstdWithGNUTar, .tarXzWithGNUTar:
            let (compressor, flag): (Tool, String) =
                switch check.format {
                case .tarGzip: (.gzip, "-z")
                case .tarZstd: (.zstd, "--zstd")
                default: (.xz, "-J")
                }
            // The compressed stream alone: whole, and nothing after it that the tool objects to.
            let stream = try await runner.run(compressor, ["-t", "-q", archive.path], in: folder.url)
            guard stream.succeeded("\(what): \(compressor) -t -q", quiet: true) else { return }
            let list = try await runner.run(.tar, [flag, "-tf", archive.path], in: folder.url)
            guard list.succeeded("\(what): tar \(flag) -tf", quiet: true) else { return }
            expectListing(list.output, equals: names, what)
            let extract = try await runner.run(.tar, [flag, "-xf", archive.path, "-C", out.path], in: folder.url)
            guard extract.succeeded("\(what): tar \(flag) -xf", quiet: true) else { return }
        case .zipWithPython:
            let read = try await runner.run(.python3, ["-c", pythonReadScript, archive.path, out.path], in: folder.url)
            guard read.succeeded("\(what): python zipfile", quiet: true) else { return }
            let lines = read.output.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first == "testzip: None", "\(what): ZipFile.testzip() found a bad member: \(lines.first ?? "")")
            expectListing(lines.dropFirst().joined(separator: "\n"), equals: names, what)
        }
        expectSameTree(try Fixture.tree(of: out), expected, what)
    }

    /// Exports `item` to `archive` in a child process (an exit test), so that a crash in the
    /// export (libarchive is C) fails the test that made it instead of ending the test process.
    /// Returns whether the child exported it.
    static func exportInChildProcess(_ item: URL, to archive: URL, format: ArchiveFormat, deterministic: Bool, what: String) async -> Bool {
        let itemPath = item.path
        let archivePath = archive.path
        let formatName = format.rawValue
        // Where the child writes the error an export throws (an exit test's output is not kept
        // when it fails).
        let errorPath = archivePath + ".error"
        let result = await #expect(processExitsWith: .success, "\(what): the export, in a child process, did not exit normally") {
            [itemPath = itemPath as String, archivePath = archivePath as String, formatName = formatName as String,
             deterministic = deterministic as Bool, errorPath = errorPath as String] in
            guard let format = ArchiveFormat(rawValue: formatName) else { fatalError("no archive format “\(formatName)”") }
            do {
                _ = try await DocumentArchiver.export(
                    itemsAt: [URL(fileURLWithPath: itemPath)], to: URL(fileURLWithPath: archivePath),
                    options: ArchiveExportOptions(format: format, isDeterministic: deterministic, durability: .consistent))
            } catch {
                try? Data("\(error)".utf8).write(to: URL(fileURLWithPath: errorPath))
                exit(EXIT_FAILURE)
            }
        }
        if let thrown = try? String(contentsOfFile: errorPath, encoding: .utf8) {
            Issue.record("\(what): the export failed: \(thrown)")
        }
        return result != nil
    }

    /// Reads every entry of a zip with Python's `zipfile` and writes it under OUT (folders,
    /// files with their Unix mode, symbolic links from their data): prints `testzip: RESULT`,
    /// then the entries' names. Arguments: ARCHIVE OUT.
    static let pythonReadScript = """
        import os, stat, sys, zipfile
        archive, out = sys.argv[1:3]
        with zipfile.ZipFile(archive) as zf:
            print(f"testzip: {zf.testzip()}")
            for info in zf.infolist():
                print(info.filename)
                mode = info.external_attr >> 16
                path = os.path.join(out, info.filename)
                if info.is_dir():
                    os.makedirs(path, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(path), exist_ok=True)
                data = zf.read(info)
                if stat.S_ISLNK(mode):
                    os.symlink(data.decode("utf-8"), path)
                else:
                    with open(path, "wb") as f:
                        f.write(data)
                    os.chmod(path, stat.S_IMODE(mode))
        """

    // MARK: - The tools

    /// Every tool these tests run is installed (a test that needs a missing one fails too).
    @Test func everyToolTheseTestsRunIsInstalled() {
        let missing = Tool.allCases.filter { $0.path == nil }
        #expect(
            missing.isEmpty,
            "Missing: \(missing.map(\.rawValue).joined(separator: ", ")). Install the Debian packages \(Set(missing.map(\.debianPackage)).sorted().joined(separator: " ")) (Scripts/bootstrap.sh test does; make test runs it)."
        )
    }

    // MARK: - Helpers

    /// Imports `archive` into a new folder and compares what came in with `expected`.
    static func importAndCompare(_ archive: URL, expected: Fixture.Tree, what: String, in folder: TemporaryDirectory) async throws {
        let destination = folder.appending("imported")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        let urls: [URL]
        do {
            urls = try await DocumentArchiver.importItems(from: archive, into: destination, options: ArchiveImportOptions(durability: .consistent))
        } catch {
            Issue.record("\(what): the import failed: \(error)")
            return
        }
        #expect(urls.map(\.lastPathComponent) == [Fixture.name], "\(what)")
        // Everything in the destination, so that anything left of the staging folder shows too.
        expectSameTree(try Fixture.tree(of: destination), expected, what)
    }

    /// Compares a tool's list of entry names (folders with or without a trailing slash) with `names`.
    static func expectListing(_ listing: String, equals names: Set<String>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let listed = listing.split(separator: "\n").map { line in
            var name = String(line)
            while name.hasSuffix("/") { name.removeLast() }
            return name
        }
        #expect(listed.count == Set(listed).count, "\(what): a name is listed twice", sourceLocation: sourceLocation)
        let missing = names.subtracting(listed).sorted()
        let extra = Set(listed).subtracting(names).sorted()
        #expect(missing.isEmpty && extra.isEmpty, "\(what): the listing misses \(missing), has extra \(extra)", sourceLocation: sourceLocation)
    }

    /// Records an issue for every path where `actual` differs from `expected`.
    static func expectSameTree(_ actual: Fixture.Tree, _ expected: Fixture.Tree, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var problems: [String] = []
        for path in Set(expected.keys).union(actual.keys).sorted() {
            switch (expected[path], actual[path]) {
            case (nil, let found?): problems.append("unexpected \(found) “\(path)”")
            case (let wanted?, nil): problems.append("“\(path)” (\(wanted)) is missing")
            case (let wanted?, let found?) where wanted != found:
                problems.append("“\(path)”: expected \(wanted), found \(found)\(Fixture.Member.firstDifference(wanted, found))")
            default: break
            }
        }
        #expect(problems.isEmpty, "\(what): \(problems.count) members differ:\n\(problems.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }
}

// The suite's helpers, nested in it so that their names cannot meet those of other files of the target.
extension ArchiveInteroperabilityTests {
    // MARK: - The fixture

    /// `Trip.note`, one of three packages: `core`, a note-like package with what archives get
    /// wrong (nested and empty folders, an empty file, a compressible body, incompressible data,
    /// a hard link, a symbolic link, an executable, a name too long for a plain tar header);
    /// `nonASCIINames`, names in UTF-8 beyond ASCII; `sparse`, files with holes.
    enum Fixture {
        enum Kind: String, Sendable, CustomStringConvertible {
            case core, nonASCIINames, sparse
            var description: String { rawValue }
        }

        static let name = "Trip.note"
        static let longName = String(repeating: "long-name-", count: 12) + ".txt"

        enum Member: Equatable, CustomStringConvertible {
            case folder
            case file(Data, executable: Bool)
            case link(String)

            var description: String {
                switch self {
                case .folder: "folder"
                case .file(let data, let executable): "file of \(data.count) bytes\(executable ? ", executable" : "")"
                case .link(let target): "link to “\(target)”"
                }
            }

            static func firstDifference(_ a: Member, _ b: Member) -> String {
                guard case .file(let left, _) = a, case .file(let right, _) = b, left != right else { return "" }
                let index = zip(left, right).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(left.count, right.count)
                return " (bytes differ from offset \(index))"
            }
        }

        /// Paths relative to the folder the tree was read from ("Trip.note/body.md").
        typealias Tree = [String: Member]

        /// Makes `Trip.note` of `kind` in the new folder `parent`; returns its tree (as `tree(of: parent)`).
        @discardableResult
        static func make(_ kind: Kind = .core, in parent: URL) throws -> Tree {
            let manager = FileManager.default
            let root = parent.appendingPathComponent(name)
            func url(_ path: String) -> URL { root.appendingPathComponent(path) }
            try manager.createDirectory(at: root, withIntermediateDirectories: true)
            let body = (0..<400).map { "Line \($0): the road went on, past the lake and the hills.\n" }.joined()
            try Data(("# Trip\n\n" + body).utf8).write(to: url("body.md"))
            switch kind {
            case .core:
                for folder in ["attachments/deeper", "empty folder", "scripts"] {
                    try manager.createDirectory(at: url(folder), withIntermediateDirectories: true)
                }
                try Data(#"{"format":"org.documentkit.notes","version":1,"title":"Trip"}"#.utf8).write(to: url("Info.json"))
                var random = SeededRandom(seed: 15)
                try Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: url("attachments/photo.jpg"))
                try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }).write(to: url("attachments/deeper/blob.bin"))
                try manager.linkItem(at: url("attachments/deeper/blob.bin"), to: url("attachments/deeper/blob-again.bin"))
                try manager.createSymbolicLink(atPath: url("attachments/link").path, withDestinationPath: "deeper/blob.bin")
                try Data().write(to: url("attachments/empty"))
                try Data("A name longer than a tar header holds.\n".utf8).write(to: url("attachments/\(longName)"))
                try Data("#!/bin/sh\necho trip\n".utf8).write(to: url("scripts/run.sh"))
                try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url("scripts/run.sh").path)
            case .nonASCIINames:
                for folder in ["日本語", "Ünïcödé folder"] { try manager.createDirectory(at: url(folder), withIntermediateDirectories: true) }
                try Data("Café, tea and ☕.\n".utf8).write(to: url("café ☕ notes.txt"))
                try Data("# メモ\n".utf8).write(to: url("日本語/メモ.md"))
                try Data("naïve\n".utf8).write(to: url("Ünïcödé folder/résumé.txt"))
            case .sparse:
                // 3 MiB: a hole, 96 KiB of data at 1 MiB, a hole to the end.
                try writeSparse(url("sparse-ends.img"), size: 3 << 20, data: [(1 << 20, 96 << 10)])
                // 2 MiB + 128 KiB: data, a hole of 2 MiB, data to the end.
                try writeSparse(url("sparse-middle.img"), size: (2 << 20) + (128 << 10), data: [(0, 64 << 10), ((2 << 20) + (64 << 10), 64 << 10)])
            }
            return try tree(of: parent)
        }

        /// A file of `size` bytes with data (not zeros) at the given ranges and holes elsewhere.
        static func writeSparse(_ url: URL, size: Int, data ranges: [(offset: Int, count: Int)]) throws {
            try Data().write(to: url)
            let handle = try FileHandle(forWritingTo: url)
            for range in ranges {
                try handle.seek(toOffset: UInt64(range.offset))
                try handle.write(contentsOf: Data((0..<range.count).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }))
            }
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
        }

        /// Everything below `folder`, by path relative to it (links not followed).
        static func tree(of folder: URL) throws -> Tree {
            let manager = FileManager.default
            let base = folder.standardizedFileURL.path
            var result: Tree = [:]
            guard let walker = manager.enumerator(atPath: base) else { return result }
            while let relative = walker.nextObject() as? String {
                let path = base + "/" + relative
                let attributes = try manager.attributesOfItem(atPath: path)
                switch attributes[.type] as? FileAttributeType {
                case .typeSymbolicLink: result[relative] = .link(try manager.destinationOfSymbolicLink(atPath: path))
                case .typeDirectory: result[relative] = .folder
                case .typeRegular:
                    let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
                    result[relative] = .file(try Data(contentsOf: URL(fileURLWithPath: path)), executable: permissions & 0o100 != 0)
                default: result[relative] = .link("(\(attributes[.type] ?? "unknown type"))")
                }
            }
            return result
        }

        /// `tree` with each symbolic link (to a file in it) replaced by that file.
        static func withLinksFollowed(_ tree: Tree) -> Tree {
            var result = tree
            for (path, member) in tree {
                guard case .link(let target) = member, let slash = path.lastIndex(of: "/") else { continue }
                if let file = tree[path[..<slash] + "/" + target] { result[path] = file }
            }
            return result
        }

        /// `tree` without its folders that hold nothing.
        static func withoutEmptyFolders(_ tree: Tree) -> Tree {
            tree.filter { path, member in
                member != .folder || tree.keys.contains { $0.hasPrefix(path + "/") }
            }
        }
    }

    // MARK: - Running the tools

    /// A program these tests run, and the Debian package it comes in.
    enum Tool: String, CaseIterable, Sendable, CustomStringConvertible {
        case bsdtar, zip, unzip, python3, tar, gzip, zstd, xz

        var description: String { rawValue }

        var debianPackage: String {
            switch self {
            case .bsdtar: "libarchive-tools"
            case .xz: "xz-utils"
            default: rawValue
            }
        }

        /// The first executable of this name on PATH (then /usr/bin, /bin), or nil.
        var path: String? {
            let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
            return folders.lazy.map { "\($0)/\(self.rawValue)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
    }

    /// The outcome of one run of a tool.
    struct ToolRun {
        var command: String
        var status: Int32
        var output: String
        var errors: String

        /// Whether it exited 0 (and, if `quiet`, wrote nothing to standard error: a warning
        /// about an archive of ours is a finding too); records an issue if not.
        func succeeded(_ what: String, quiet: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
            guard status == 0 else {
                Issue.record("\(what): `\(command)` exited with \(status): \(errors)\(output.prefix(2_000))", sourceLocation: sourceLocation)
                return false
            }
            if quiet, !errors.isEmpty {
                Issue.record("\(what): `\(command)` warned: \(errors)", sourceLocation: sourceLocation)
            }
            return true
        }
    }

    /// Runs tools found on PATH, each a real process (Foundation `Process`).
    struct ToolRunner {
        let paths: [Tool: String]

        /// A runner for `tools`; nil, with an issue naming the package to install for each one
        /// missing, if any is.
        init?(requiring tools: [Tool], sourceLocation: SourceLocation = #_sourceLocation) {
            var paths: [Tool: String] = [:]
            var missing: [Tool] = []
            for tool in tools {
                if let path = tool.path { paths[tool] = path } else { missing.append(tool) }
            }
            for tool in missing {
                Issue.record(
                    "`\(tool)` is not installed: install the Debian package \(tool.debianPackage) (`sudo apt-get install \(tool.debianPackage)`, or `Scripts/bootstrap.sh test`, which `make test` runs)",
                    sourceLocation: sourceLocation)
            }
            guard missing.isEmpty else { return nil }
            self.paths = paths
        }

        /// Runs `tool ARGUMENTS` in `folder` with `LC_ALL=C.UTF-8` and waits for it. Standard
        /// output goes to `standardOutput` if given (else it is collected): straight to the file,
        /// or, with `throughPipe`, through a pipe, so that the tool cannot seek in it.
        func run(_ tool: Tool, _ arguments: [String], in folder: URL, standardOutput: URL? = nil, throughPipe: Bool = false) async throws
            -> ToolRun
        {
            guard let path = paths[tool] else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: tool.rawValue]) }
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("archive-interop-\(UUID().uuidString)")
            let outputURL = standardOutput ?? scratch.appendingPathExtension("out")
            let errorURL = scratch.appendingPathExtension("err")
            try Data().write(to: outputURL)
            try Data().write(to: errorURL)
            defer {
                if standardOutput == nil { try? FileManager.default.removeItem(at: outputURL) }
                try? FileManager.default.removeItem(at: errorURL)
            }
            let outputHandle = try FileHandle(forWritingTo: outputURL)
            let errorHandle = try FileHandle(forWritingTo: errorURL)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
            process.currentDirectoryURL = folder
            var environment = ProcessInfo.processInfo.environment
            environment["LC_ALL"] = "C.UTF-8"
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardError = errorHandle
            let pipe = throughPipe ? Pipe() : nil
            process.standardOutput = pipe ?? outputHandle
            // Drains the pipe while the tool runs (it ends when the tool's end is closed).
            let reader = pipe?.fileHandleForReading
            let drained = Task.detached { reader.map { $0.readDataToEndOfFile() } }
            do {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    process.terminationHandler = { _ in continuation.resume() }
                    do { try process.run() } catch {
                        process.terminationHandler = nil
                        continuation.resume(throwing: error)
                    }
                }
            } catch {
                try? pipe?.fileHandleForWriting.close()
                _ = await drained.value
                throw error
            }
            if let piped = await drained.value { try outputHandle.write(contentsOf: piped) }
            try outputHandle.close()
            try errorHandle.close()
            let shown = ([tool.rawValue] + arguments.map { $0.contains("\n") ? "SCRIPT" : $0 }).joined(separator: " ")
            return ToolRun(
                command: shown + (throughPipe ? " | …" : ""), status: process.terminationStatus,
                output: standardOutput == nil ? String(decoding: try Data(contentsOf: outputURL), as: UTF8.self) : "",
                errors: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
        }
    }

    // MARK: - Reading a zip's records

    /// Just enough of a zip's structure to tell that an archive has the shape a test means to test:
    /// the central directory's entries and their local headers.
    struct ZipInspection {
        struct Entry {
            var name: String
            var flags: UInt16
            var method: UInt16
            var externalMode: UInt32
            var localExtraIDs: [UInt16]
        }

        struct Damaged: Error, CustomStringConvertible { var description: String }

        let bytes: [UInt8]
        init(_ data: Data) { bytes = Array(data) }

        private func u16(_ i: Int) -> UInt16 { UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 }
        private func u32(_ i: Int) -> UInt32 { UInt32(u16(i)) | UInt32(u16(i + 2)) << 16 }

        /// The offset of the end-of-central-directory record.
        private func endRecord() throws -> Int {
            var index = bytes.count - 22
            while index >= 0 {
                if u32(index) == 0x0605_4B50 { return index }
                index -= 1
            }
            throw Damaged(description: "no end-of-central-directory record")
        }

        /// Whether a zip64 end record's locator sits just before the end record.
        var hasZip64EndRecord: Bool {
            guard let end = try? endRecord(), end >= 20 else { return false }
            return u32(end - 20) == 0x0706_4B50
        }

        /// The entries in central-directory order (a classic end record only).
        func localHeaders() throws -> [Entry] {
            let end = try endRecord()
            let count = Int(u16(end + 10))
            var position = Int(u32(end + 16))
            var entries: [Entry] = []
            for _ in 0..<count {
                guard position + 46 <= bytes.count, u32(position) == 0x0201_4B50 else { throw Damaged(description: "a damaged central directory") }
                let nameLength = Int(u16(position + 28))
                let extraLength = Int(u16(position + 30))
                let commentLength = Int(u16(position + 32))
                let name = String(decoding: bytes[position + 46..<position + 46 + nameLength], as: UTF8.self)
                let local = Int(u32(position + 42))
                guard local + 30 <= bytes.count, u32(local) == 0x0403_4B50 else { throw Damaged(description: "no local header for \(name)") }
                var ids: [UInt16] = []
                var extra = local + 30 + Int(u16(local + 26))
                let extraEnd = extra + Int(u16(local + 28))
                while extra + 4 <= extraEnd {
                    ids.append(u16(extra))
                    extra += 4 + Int(u16(extra + 2))
                }
                entries.append(Entry(name: name, flags: u16(local + 6), method: u16(local + 8), externalMode: u32(position + 38) >> 16, localExtraIDs: ids))
                position += 46 + nameLength + extraLength + commentLength
            }
            return entries
        }
    }
}
