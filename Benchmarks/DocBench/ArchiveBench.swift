#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation

/// The archive benchmark (issue #15): export and import of a note-like package of 1,000 files
/// (~100 MB, mixed sizes, partly compressible) with `DocumentArchiver`, against `bsdtar` (the
/// same libarchive, as a command) on the same data in the same run; then packages of 1, 1,000
/// and 10,000 small members, to see the cost per member.
///
/// Every export and import is a process of its own — ours `docbench --archive-child ...`, theirs
/// `bsdtar` — timed from spawn to reaping, its peak memory as GNU `time -f %M` reports it (the
/// child's `ru_maxrss`). Not `wait4` on a child docbench spawns itself: `posix_spawn` runs the
/// child in the parent's memory until `exec`, and Linux counts the parent's peak in the child's
/// `ru_maxrss` (every child read as docbench's own 31 MiB). The variants take turns in an order
/// that rotates every round; the file system is synced (untimed) before and after each run.
struct ArchiveBench: Benchmark {
    let rounds: Int
    /// Members of the packages of small files.
    let sizes: [Int]
    let work: WorkDirectory

    enum Operation: String { case export, `import` }

    /// Who does the work: DocumentKit without flushing (what bsdtar does), DocumentKit as by
    /// default (durable: every file and folder flushed), or bsdtar.
    enum Doer: String, CaseIterable {
        case ours = "DocumentKit"
        case oursDurable = "DocumentKit, durable"
        case bsdtar
    }

    struct Key: Hashable {
        var members: Int  // 0: the large note
        var operation: Operation
        var format: ArchiveFormat
        var doer: Doer
    }

    struct Measure {
        var time = Samples()
        var memory = Samples()
        /// User + system CPU time.
        var cpu = Samples()
        /// DocumentKit's own timing inside the child (no process start-up).
        var inProcess = Samples()
        var archiveBytes: Int64 = 0
    }

    struct Result {
        var measures: [Key: Measure] = [:]
        var noteFiles = 0
        var noteBytes: Int64 = 0
        var startup: [Doer: Measure] = [:]
        var bsdtarVersion = ""
    }

    static let formats: [ArchiveFormat] = [.tarGzip, .zip]

    // MARK: - The data

    /// Writes the large note: `Info.json`, `body.md`, and 998 attachments — 48 photos of 1 to
    /// 2 MiB (random bytes: incompressible), 250 documents of 48 to 160 KiB (half prose, half
    /// random), 700 snippets of 1 to 16 KiB (prose). Returns the files and their bytes.
    static func makeLargeNote(at path: String) throws -> (files: Int, bytes: Int64) {
        var random = SeededRandom(seed: 15)
        let root = URL(fileURLWithPath: path)
        var files = 0
        var bytes: Int64 = 0
        func write(_ relative: String, _ data: Data) throws {
            let url = root.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
            files += 1
            bytes += Int64(data.count)
        }
        try write("Info.json", Data(#"{"format":"org.documentkit.notes","version":1,"title":"Trip"}"#.utf8))
        try write("body.md", prose(20_000, &random))
        for index in 0..<48 {
            try write(String(format: "attachments/photos/IMG_%04d.jpg", index), noise(Int.random(in: 1 << 20...2 << 20, using: &random), &random))
        }
        for index in 0..<250 {
            let size = Int.random(in: 48 << 10...160 << 10, using: &random)
            var data = prose(size / 2, &random)
            data.append(noise(size - data.count, &random))
            try write(String(format: "attachments/documents/doc-%03d.pdf", index), data)
        }
        for index in 0..<700 {
            try write(String(format: "attachments/snippets/snippet-%03d.md", index), prose(Int.random(in: 1 << 10...16 << 10, using: &random), &random))
        }
        return (files, bytes)
    }

    /// A package of `members` files of about 1 KiB of prose in `attachments/`.
    static func makeSmallNote(at path: String, members: Int) throws {
        var random = SeededRandom(seed: UInt64(members))
        let folder = URL(fileURLWithPath: path).appendingPathComponent("attachments")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 0..<members {
            try prose(1024, &random).write(to: folder.appendingPathComponent(String(format: "a%06d.md", index)))
        }
    }

    /// `count` random bytes.
    static func noise(_ count: Int, _ random: inout SeededRandom) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < count {
                var word = random.next()
                let n = min(8, count - offset)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
                offset += n
            }
        }
        return data
    }

    static let words = [
        "the", "road", "went", "on", "past", "lake", "and", "hills", "we", "stopped", "for", "coffee", "at", "a", "small",
        "village", "where", "market", "sold", "bread", "cheese", "apples", "rain", "came", "in", "afternoon", "train",
        "station", "north", "museum", "bridge", "river", "old", "town", "map", "ticket", "evening", "dinner", "friends",
    ]

    /// About `count` bytes of text from a small vocabulary (compresses about 3:1 with gzip).
    static func prose(_ count: Int, _ random: inout SeededRandom) -> Data {
        var text = ""
        text.reserveCapacity(count + 16)
        var sentence = 0
        while text.utf8.count < count {
            text += words[Int(random.next() % UInt64(words.count))]
            sentence += 1
            if sentence % 12 == 0 { text += ".\n" } else { text += " " }
        }
        return Data(text.utf8.prefix(count))
    }

    // MARK: - Running

    /// bsdtar's path, or a failure saying what to install.
    static func bsdtarPath() throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
        guard let path = folders.map({ $0 + "/bsdtar" }).first(where: { access($0, X_OK) == 0 }) else {
            throw BenchError(description: "bsdtar is not installed: install the Debian package libarchive-tools (Scripts/bootstrap.sh test does)")
        }
        return path
    }

    /// Runs programs under GNU `time`, which reports the peak memory of the program alone.
    struct Launcher {
        let process: ChildProcess
        let scratch: String

        init(scratch: String) throws {
            guard access("/usr/bin/time", X_OK) == 0 else {
                throw BenchError(description: "/usr/bin/time is not installed: install the Debian package time")
            }
            process = ChildProcess(executable: "/usr/bin/time", scratch: scratch)
            self.scratch = scratch
        }

        /// Runs `executable ARGUMENTS`; its time from spawn to reaping, its peak memory (bytes),
        /// its CPU time (user + system, ns; GNU time counts hundredths of a second) and its
        /// standard output.
        func run(_ executable: String, _ arguments: [String]) throws -> (elapsed: UInt64, memory: UInt64, cpu: UInt64, output: String) {
            let report = scratch + "/time.out"
            let child = try process.run(["-f", "%M %U %S", "-o", report, executable] + arguments, captureOutput: true)
            let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
            let fields = text.split(whereSeparator: \.isNewline).last?.split(separator: " ").compactMap { Double($0) } ?? []
            guard fields.count == 3 else { throw BenchError(description: "no peak memory from /usr/bin/time for \(executable): “\(text)”") }
            return (child.elapsed, UInt64(fields[0]) * 1024, UInt64((fields[1] + fields[2]) * 1e9), child.output)
        }
    }

    /// One thing to run in a round: the program, its arguments, and what to do around it.
    struct Run {
        var key: Key
        var executable: String
        var arguments: [String]
        /// Made (untimed) before the run: the destination folder of an import.
        var folder: String?
        /// Removed (an archive) or set aside until the end (an imported tree) after the run.
        var output: String
        /// Checks the output (untimed); throws if the run did not do the work.
        var check: () throws -> Int64
    }

    func run() throws -> Result {
        var result = Result()
        let theirs = try Self.bsdtarPath()
        let ours = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let launcher = try Launcher(scratch: work.path)
        result.bsdtarVersion = try launcher.run(theirs, ["--version"]).output.trimmingCharacters(in: .whitespacesAndNewlines)

        // Start-up of each process doing nothing, for reference.
        for _ in 0..<max(rounds, 5) {
            for (doer, executable, arguments) in [(Doer.ours, ours, ["--noop"]), (.bsdtar, theirs, ["--version"])] {
                let child = try launcher.run(executable, arguments)
                result.startup[doer, default: Measure()].time.append(child.elapsed)
                result.startup[doer, default: Measure()].memory.append(child.memory)
            }
        }
        // Imported trees are set aside here and removed with the work folder at the end: on
        // this machine's ext4 without a journal, creating files where thousands were deleted in
        // the last minute costs up to ten times more (the inode allocator skips recently deleted
        // inodes one by one: `recently_deleted` in a profile); removing each import before the
        // next would measure the file system's history, not the archiver.
        let setAside = try work.makeSubdirectory("imported")
        close(setAside.fd)
        let context = Context(launcher: launcher, ours: ours, theirs: theirs, setAside: setAside.path)

        // The large note.
        let large = try work.makeSubdirectory("large")
        progress("docbench archive: writing the large note")
        (result.noteFiles, result.noteBytes) = try Self.makeLargeNote(at: large.path + "/Trip.note")
        close(large.fd)
        try measure(members: 0, folder: large.path, expectedFiles: result.noteFiles, doers: Doer.allCases, context, into: &result)

        // Packages of small members.
        for members in sizes {
            let small = try work.makeSubdirectory("small-\(members)")
            close(small.fd)
            progress("docbench archive: writing a note of \(members) members")
            try Self.makeSmallNote(at: small.path + "/Trip.note", members: members)
            try measure(members: members, folder: small.path, expectedFiles: members, doers: [.ours, .bsdtar], context, into: &result)
        }
        return result
    }

    /// What every measurement needs: the launcher, the two programs, where imports are set aside.
    struct Context {
        let launcher: Launcher
        let ours: String
        let theirs: String
        let setAside: String
    }

    /// Measures export and import of `folder/Trip.note` in both formats by every doer.
    private func measure(members: Int, folder: String, expectedFiles: Int, doers: [Doer], _ context: Context, into result: inout Result) throws {
        let note = folder + "/Trip.note"
        let scratch = folder + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        var runs: [Run] = []
        for format in Self.formats {
            // The archive every import reads: ours, made once (untimed). bsdtar's differs only
            // in its headers (owner names, extended attributes); both compress with the same zlib.
            let reference = scratch + "/reference.\(format.fileExtension)"
            _ = try context.launcher.run(context.ours, ["--archive-child", "export", format.rawValue, "consistent", note, reference])
            for doer in doers {
                let durability = doer == .oursDurable ? "durable" : "consistent"
                let archive = scratch + "/\(doer == .bsdtar ? "theirs" : "ours")-\(durability).\(format.fileExtension)"
                let exportArguments =
                    doer == .bsdtar
                    ? (format == .zip ? ["--format", "zip", "-cf"] : ["-czf"]) + [archive, "-C", folder, "Trip.note"]
                    : ["--archive-child", "export", format.rawValue, durability, note, archive]
                runs.append(Run(
                    key: Key(members: members, operation: .export, format: format, doer: doer), executable: doer == .bsdtar ? context.theirs : context.ours,
                    arguments: exportArguments, folder: nil, output: archive,
                    check: {
                        var status = stat()
                        guard stat(archive, &status) == 0, status.st_size > 0 else { throw BenchError(description: "no archive at \(archive)") }
                        return Int64(status.st_size)
                    }))
                let destination = scratch + "/imported-\(doer)-\(format.fileExtension)".replacingOccurrences(of: " ", with: "-")
                let importArguments =
                    doer == .bsdtar ? ["-xf", reference, "-C", destination] : ["--archive-child", "import", reference, destination, durability]
                runs.append(Run(
                    key: Key(members: members, operation: .import, format: format, doer: doer), executable: doer == .bsdtar ? context.theirs : context.ours,
                    arguments: importArguments, folder: destination, output: destination,
                    check: {
                        let count = Self.countFiles(destination + "/Trip.note")
                        guard count == expectedFiles else {
                            throw BenchError(description: "\(doer) imported \(count) files of \(expectedFiles) into \(destination)")
                        }
                        return 0
                    }))
            }
        }
        let label = members == 0 ? "the large note" : "\(members) members"
        // One untimed warm-up of each, then the timed rounds in rotated order.
        for round in -1..<rounds {
            progress("docbench archive: \(label), \(round < 0 ? "warm-up" : "round \(round + 1) of \(rounds)")")
            let order = round < 0 ? runs : Array(runs[(round % runs.count)...] + runs[..<(round % runs.count)])
            for run in order {
                if let folder = run.folder { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
                work.syncFileSystem()
                let child = try context.launcher.run(run.executable, run.arguments)
                let size = try run.check()
                if run.folder != nil {
                    let aside = context.setAside + "/\(UUID().uuidString)"
                    try check(rename(run.output, aside), "setting aside \(run.output)")
                } else {
                    try? FileManager.default.removeItem(atPath: run.output)
                }
                work.syncFileSystem()
                guard round >= 0 else { continue }
                var measure = result.measures[run.key, default: Measure()]
                measure.time.append(child.elapsed)
                measure.memory.append(child.memory)
                measure.cpu.append(child.cpu)
                if let inside = UInt64(child.output.trimmingCharacters(in: .whitespacesAndNewlines)) { measure.inProcess.append(inside) }
                if size > 0 { measure.archiveBytes = size }
                result.measures[run.key] = measure
            }
        }
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Regular files below `path`.
    static func countFiles(_ path: String) -> Int {
        guard let walker = FileManager.default.enumerator(at: URL(fileURLWithPath: path), includingPropertiesForKeys: [.isRegularFileKey])
        else { return 0 }
        var count = 0
        for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true { count += 1 }
        return count
    }

    // MARK: - The child

    /// `docbench --archive-child export FORMAT DURABILITY ITEM ARCHIVE` and
    /// `docbench --archive-child import ARCHIVE FOLDER DURABILITY`: one export or import with
    /// `DocumentArchiver`, printing its time inside the process (ns). Never returns.
    static func childMain(_ arguments: [String]) -> Never {
        func durability(_ text: String) -> Durability { text == "durable" ? .durable : .consistent }
        do {
            switch arguments.first {
            case "export" where arguments.count == 5:
                guard let format = ArchiveFormat(rawValue: arguments[1]) else { fail("no archive format “\(arguments[1])”") }
                let options = ArchiveExportOptions(format: format, durability: durability(arguments[2]))
                let (item, archive) = (URL(fileURLWithPath: arguments[3]), URL(fileURLWithPath: arguments[4]))
                let elapsed = try blocking { () async throws -> UInt64 in
                    let start = now()
                    _ = try await DocumentArchiver.export(itemsAt: [item], to: archive, options: options)
                    return now() - start
                }
                print(elapsed)
            case "import" where arguments.count == 4:
                let (archive, folder) = (URL(fileURLWithPath: arguments[1]), URL(fileURLWithPath: arguments[2]))
                let options = ArchiveImportOptions(durability: durability(arguments[3]))
                let elapsed = try blocking { () async throws -> UInt64 in
                    let start = now()
                    _ = try await DocumentArchiver.importItems(from: archive, into: folder, options: options)
                    return now() - start
                }
                print(elapsed)
            default:
                fail("usage: docbench --archive-child export FORMAT DURABILITY ITEM ARCHIVE | import ARCHIVE FOLDER DURABILITY")
            }
            exit(0)
        } catch {
            fail("\(error)", status: 1)
        }
    }

    // MARK: - The report

    func markdown(_ result: Result) -> String {
        func mbps(_ bytes: Int64, _ ns: UInt64) -> String { ns > 0 ? String(format: "%.0f", Double(bytes) / 1e6 / (Double(ns) / 1e9)) : "n/a" }
        func mib(_ bytes: UInt64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        var lines = [
            "### archive: export and import against bsdtar (\(rounds) rounds, medians)",
            "",
            "\(result.bsdtarVersion). Every run is a process of its own, timed from spawn to reaping; peak memory: GNU `time -f %M` (its `ru_maxrss`).",
            "Processes doing nothing: docbench \(formatDuration(result.startup[.ours]?.time.median ?? 0)), \(mib(result.startup[.ours]?.memory.median ?? 0)); "
                + "bsdtar --version \(formatDuration(result.startup[.bsdtar]?.time.median ?? 0)), \(mib(result.startup[.bsdtar]?.memory.median ?? 0)).",
            "",
            "A note of \(result.noteFiles) files, \(String(format: "%.1f", Double(result.noteBytes) / 1e6)) MB (MB/s: of member bytes, 10⁶ B). "
                + "Imports read the same archive (exported by DocumentKit); \"DocumentKit\" flushes nothing, as bsdtar; \"durable\" is the default (fsync of every file and folder).",
            "",
            "| operation | format | DocumentKit | bsdtar | DocumentKit / bsdtar | MB/s DocumentKit / bsdtar | CPU (user + sys) DocumentKit / bsdtar | peak memory DocumentKit / bsdtar | DocumentKit, durable (default) | archive DocumentKit / bsdtar |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for operation in [Operation.export, .import] {
            for format in Self.formats {
                let key = Key(members: 0, operation: operation, format: format, doer: .ours)
                guard let ours = result.measures[key], let theirs = result.measures[Key(members: 0, operation: operation, format: format, doer: .bsdtar)],
                    let durable = result.measures[Key(members: 0, operation: operation, format: format, doer: .oursDurable)]
                else { continue }
                let sizes = operation == .export
                    ? "\(String(format: "%.1f", Double(ours.archiveBytes) / 1e6)) / \(String(format: "%.1f", Double(theirs.archiveBytes) / 1e6)) MB" : ""
                lines.append(
                    "| \(operation) | \(format) | \(formatDuration(ours.time.median)) (in process \(formatDuration(ours.inProcess.median))) | \(formatDuration(theirs.time.median)) | "
                        + "**\(formatRatio(ours.time.median, theirs.time.median))** | \(mbps(result.noteBytes, ours.time.median)) / \(mbps(result.noteBytes, theirs.time.median)) | "
                        + "\(formatDuration(ours.cpu.median)) / \(formatDuration(theirs.cpu.median)) | "
                        + "\(mib(ours.memory.max)) / \(mib(theirs.memory.max)) | \(formatDuration(durable.time.median)) | \(sizes) |")
            }
        }
        lines += [
            "",
            "Packages of N members of 1 KiB of text (in `attachments/`); per member: (t(N) − t(1)) / (N − 1).",
            "",
            "| members | operation | format | DocumentKit | bsdtar | DocumentKit / bsdtar | per member DocumentKit / bsdtar | CPU DocumentKit / bsdtar | peak memory DocumentKit / bsdtar |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        let smallest = sizes.min() ?? 1
        for operation in [Operation.export, .import] {
            for format in Self.formats {
                for members in sizes {
                    guard let ours = result.measures[Key(members: members, operation: operation, format: format, doer: .ours)],
                        let theirs = result.measures[Key(members: members, operation: operation, format: format, doer: .bsdtar)]
                    else { continue }
                    var perMember = "—"
                    if members > smallest, let oursBase = result.measures[Key(members: smallest, operation: operation, format: format, doer: .ours)],
                        let theirsBase = result.measures[Key(members: smallest, operation: operation, format: format, doer: .bsdtar)]
                    {
                        func per(_ t: UInt64, _ base: UInt64) -> String { formatDuration(UInt64(max(0, Double(t) - Double(base)) / Double(members - smallest))) }
                        perMember = "\(per(ours.time.median, oursBase.time.median)) / \(per(theirs.time.median, theirsBase.time.median))"
                    }
                    lines.append(
                        "| \(members) | \(operation) | \(format) | \(formatDuration(ours.time.median)) | \(formatDuration(theirs.time.median)) | "
                            + "\(formatRatio(ours.time.median, theirs.time.median)) | \(perMember) | \(formatDuration(ours.cpu.median)) / \(formatDuration(theirs.cpu.median)) | "
                            + "\(mib(ours.memory.max)) / \(mib(theirs.memory.max)) |")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension ArchiveBench.Doer: CustomStringConvertible {
    var description: String { rawValue }
}
