#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

/// The large-package benchmark (issue #14 §2): a note-like package (`Info.json`, `body.md`,
/// `attachments/` of N files of 1 KiB) opened in a new process with the member digest cache
/// warm, against the floor of `fstat` of every member and a read of the body; a body edit saved
/// against the raw package-save floor (`PackageBench`'s); and a 200 MB member opened with the
/// cache cold and warm.
struct LargePackageBench: Benchmark {
    let sizes: [Int]
    let rounds: Int
    let largeBytes: Int
    let work: WorkDirectory

    static let manifestName = "Info.json"
    static let format = FormatDescription(identifier: "org.documentkit.docbench.large", version: 1)

    struct Row {
        var members: Int
        var open = Samples()
        var floor = Samples()
        var hashedWarm = 0
        var save = Samples()
        var saveFloor: UInt64 = 0
    }

    struct Result {
        var rows: [Row] = []
        var largeCold = Samples()
        var largeWarm = Samples()
        var largeHashedWarm = 0
    }

    func run() throws -> Result {
        var result = Result()
        for count in sizes {
            let folder = try work.makeSubdirectory("large-\(count)")
            let package = folder.path + "/Note.note"
            let cache = folder.path + "/cache"
            progress("docbench large-package: building \(count) attachments")
            try Self.makePackage(at: package, attachments: count, attachmentSize: 1024)
            usleep(100_000)  // older than the racy-timestamp margin
            var row = Row(members: count)
            _ = try Self.child(package, cache: cache)  // warms the digest cache
            for _ in 0..<rounds {
                let measured = try Self.child(package, cache: cache)
                row.open.append(measured.open)
                row.floor.append(measured.floor)
                row.hashedWarm = measured.hashed
            }
            // (b) body edits, in this process, as a document saves: the in-memory digests, then
            // the saved members' new identities recorded in the digest cache.
            var hasher = MemberHasher(digestCache: PersistentMemberDigestCache(folderURL: URL(fileURLWithPath: cache)))
            let url = URL(fileURLWithPath: package)
            var tree = try FileWrapper(contentsOf: url)
            var manifest = try DocumentManifest(package: tree, manifestName: Self.manifestName, packagePath: package)
            _ = try hasher.verify(tree, against: manifest, manifestName: Self.manifestName, packagePath: package)
            for round in 0..<rounds {
                let started = now()
                tree["body.md"] = FileWrapper(regularFileWithContents: Data("# Note\n\nedit \(round)\n".utf8))
                manifest.members = try hasher.memberRecords(
                    of: tree, manifestName: Self.manifestName, previous: manifest.members, packagePath: package)
                tree[Self.manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
                let saved = try tree.write(to: url)
                hasher.rememberDigests(of: saved, members: manifest.members ?? [:])
                hasher.recordSavedDigests(ofPackageAt: package, members: manifest.members ?? [:])
                tree = saved
                row.save.append(now() - started)
                work.syncFileSystem()
            }
            progress("docbench large-package: the raw save floor of \(count + 2) files")
            let floorWork = try WorkDirectory(base: work.path, keep: false)
            defer { floorWork.remove() }
            let floor = try PackageBench(
                count: count + 2, size: 1024, iterations: rounds, copyIterations: 1, variants: [.floor], work: floorWork
            ).run()
            row.saveFloor = floor.totals[.floor]?.median ?? 0
            result.rows.append(row)
        }
        // (c) a 200 MB member: the first open hashes it, the next ones don't read it.
        let folder = try work.makeSubdirectory("large-member")
        let package = folder.path + "/Big.note"
        progress("docbench large-package: a \(largeBytes >> 20) MiB member")
        try Self.makePackage(at: package, attachments: 1, attachmentSize: largeBytes)
        usleep(100_000)
        for round in 0..<rounds {
            let cache = folder.path + "/cache-\(round)"
            result.largeCold.append(try Self.child(package, cache: cache).open)
            let warm = try Self.child(package, cache: cache)
            result.largeWarm.append(warm.open)
            result.largeHashedWarm = warm.hashed
        }
        return result
    }

    /// Writes a note-like package: a body, `attachments` files of `attachmentSize` bytes, a manifest.
    static func makePackage(at path: String, attachments: Int, attachmentSize: Int) throws {
        var files: [String: FileWrapper] = [:]
        let bytes = Data((0..<attachmentSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for index in 0..<attachments {
            var data = bytes
            withUnsafeBytes(of: UInt32(index).littleEndian) { data.replaceSubrange(0..<Swift.min(4, data.count), with: $0.prefix(data.count)) }
            files[String(format: "a%06d.bin", index)] = FileWrapper(regularFileWithContents: data)
        }
        var tree = FileWrapper(directoryWithFileWrappers: [
            "body.md": FileWrapper(regularFileWithContents: Data("# Note\n\nThe body.\n".utf8)),
            "attachments": FileWrapper(directoryWithFileWrappers: files),
        ])
        var manifest = format.makeManifest(writer: DocumentManifest.Writer(name: "docbench", version: "1"))
        var hasher = MemberHasher()
        manifest.members = try hasher.memberRecords(of: tree, manifestName: manifestName, packagePath: path)
        tree[manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        try tree.write(to: URL(fileURLWithPath: path))
    }

    /// Runs `docbench --large-open PACKAGE CACHE` and reads its timings.
    static func child(_ package: String, cache: String) throws -> (open: UInt64, floor: UInt64, hashed: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--large-open", package, cache]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = text.split(whereSeparator: \.isWhitespace).compactMap { UInt64($0) }
        guard process.terminationStatus == 0, fields.count == 3 else { throw BenchError(description: "the open child failed: \(text)") }
        return (fields[0], fields[1], Int(fields[2]))
    }

    /// The child: opens the package as a document does (read the tree, the manifest, verify the
    /// members with the digest cache in `cache`, read the body), then the floor (open the
    /// folders, `fstatat` every member, read the body). Prints "OPEN-NS FLOOR-NS HASHED".
    /// For profiling: `docbench --large-save PACKAGE CACHE ROUNDS` makes (b)'s body edits, printing each one's time.
    static func saveChild(_ package: String, cache: String, rounds: Int) -> Never {
        do {
            var hasher = MemberHasher(digestCache: PersistentMemberDigestCache(folderURL: URL(fileURLWithPath: cache)))
            let url = URL(fileURLWithPath: package)
            var tree = try FileWrapper(contentsOf: url)
            var manifest = try DocumentManifest(package: tree, manifestName: manifestName, packagePath: package)
            _ = try hasher.verify(tree, against: manifest, manifestName: manifestName, packagePath: package)
            for round in 0..<rounds {
                let started = now()
                tree["body.md"] = FileWrapper(regularFileWithContents: Data("# Note\n\nedit \(round)\n".utf8))
                manifest.members = try hasher.memberRecords(of: tree, manifestName: manifestName, previous: manifest.members, packagePath: package)
                tree[manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
                let saved = try tree.write(to: url)
                hasher.rememberDigests(of: saved, members: manifest.members ?? [:])
                hasher.recordSavedDigests(ofPackageAt: package, members: manifest.members ?? [:])
                tree = saved
                print("save \(Double(now() - started) / 1e6) ms")
            }
            exit(0)
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }

    static func openChild(_ package: String, cache: String) -> Never {
        do {
            let digestCache = PersistentMemberDigestCache(folderURL: URL(fileURLWithPath: cache))
            _ = digestCache.isAvailable  // the cache file opened outside the timing, as a long-lived process has it
            let started = now()
            let url = URL(fileURLWithPath: package)
            let tree = try FileWrapper(contentsOf: url)
            let manifest = try DocumentManifest(package: tree, manifestName: manifestName, packagePath: package)
            var hasher = MemberHasher(digestCache: digestCache)
            try hasher.verify(tree, against: manifest, manifestName: manifestName, packagePath: package).checkComplete()
            let body = try tree["body.md"]?.regularFileContents
            let opening = now() - started
            precondition(body?.isEmpty == false)

            let floorStarted = now()
            let root = open(package, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let attachments = openat(root, "attachments", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            var status = stat()
            _ = fstatat(root, manifestName, &status, AT_SYMLINK_NOFOLLOW)
            for (name, _) in tree["attachments"]?.fileWrappers ?? [:] {
                _ = fstatat(attachments, name, &status, AT_SYMLINK_NOFOLLOW)
            }
            let bodyFD = openat(root, "body.md", O_RDONLY | O_CLOEXEC)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            _ = read(bodyFD, &buffer, buffer.count)
            close(bodyFD)
            close(attachments)
            close(root)
            let floor = now() - floorStarted
            print("\(opening) \(floor) \(hasher.hashedFileCount)")
            exit(0)
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }

    func markdown(_ result: Result) -> String {
        var lines = ["### large-package: opening and editing a note of N attachments (\(rounds) rounds, medians)", ""]
        lines.append("| attachments | (a) open in a new process, cache warm | floor: fstat every member + read body | a / floor (goal ≤ 2×) | members read | (b) body edit save | raw package-save floor | b / floor (goal ≤ 1.5×) |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in result.rows {
            lines.append(
                "| \(row.members) | \(formatDuration(row.open.median)) | \(formatDuration(row.floor.median)) | \(formatRatio(row.open.median, row.floor.median)) | \(row.hashedWarm) | \(formatDuration(row.save.median)) | \(formatDuration(row.saveFloor)) | \(formatRatio(row.save.median, row.saveFloor)) |")
        }
        lines.append("")
        lines.append("(c) a \(largeBytes >> 20) MiB member, open in a new process: cache cold \(formatDuration(result.largeCold.median)), warm \(formatDuration(result.largeWarm.median)) (\(formatRatio(result.largeWarm.median, result.largeCold.median)); members read when warm: \(result.largeHashedWarm)).")
        return lines.joined(separator: "\n")
    }
}
