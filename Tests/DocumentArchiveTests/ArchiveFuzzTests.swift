#if canImport(Glibc)
import Glibc
#endif
import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// A seeded fuzz run over mutated archives of a small package: every input is either imported
/// (inside the destination, links leading nowhere else) or refused with a DocumentKitError that
/// leaves the destination as it was; nothing is ever written beside it; no input crashes or
/// hangs the importer.
///
/// The inputs are imported by child processes (this test binary, two at once), so that a crash
/// fails this test with the input that caused it instead of ending the test run; a child whose
/// current input takes over 30 s is killed and reported as a hang.
///
/// - `DOCUMENTKIT_FUZZ_ITERATIONS`: how many inputs (default 10,000).
/// - `DOCUMENTKIT_FUZZ_SEED`: the seed (default 2026); printed, with every failure's input number.
/// - `DOCUMENTKIT_FUZZ_INPUT`: replay that one input of the seed.
@Suite struct ArchiveFuzzTests {
    static let seedVariable = "DOCUMENTKIT_FUZZ_SEED"
    static let iterationsVariable = "DOCUMENTKIT_FUZZ_ITERATIONS"
    static let inputVariable = "DOCUMENTKIT_FUZZ_INPUT"
    /// Set by the parent for a child: "WORKER/WORKERS", the corpus folder, the progress file.
    static let workerVariable = "DOCUMENTKIT_FUZZ_WORKER"
    static let corpusVariable = "DOCUMENTKIT_FUZZ_CORPUS"
    static let progressVariable = "DOCUMENTKIT_FUZZ_PROGRESS"
    /// The first input a child takes (after a crash, the one after it).
    static let startVariable = "DOCUMENTKIT_FUZZ_START"

    static let defaultIterations = 10_000
    static let workers = 2
    /// The codes a refused input may give.
    static let refusals: Set<DocumentKitError.Code> = [.corruptData, .unsafeArchiveEntry, .archiveLimitExceeded]

    // MARK: The parent

    @Test func mutatedArchivesAreImportedOrRefusedCleanly() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = SeededRandom.seed(environment: Self.seedVariable, default: 2026)
        let iterations = environment[Self.iterationsVariable].flatMap { Int($0) } ?? Self.defaultIterations
        let replayed = environment[Self.inputVariable].flatMap { Int($0) }
        print("ArchiveFuzzTests: \(replayed.map { "input \($0) of " } ?? "\(iterations) inputs, ")seed \(seed) (replay: \(Self.seedVariable)=\(seed))")
        let work = try TemporaryDirectory(prefix: "fuzz")
        let corpusFolder = work.appending("corpus")
        let corpus = try await Corpus.write(in: corpusFolder)
        let started = ContinuousClock.now

        let reports = try await withThrowingTaskGroup(of: WorkerReport.self) { group in
            for worker in 0..<Self.workers {
                group.addTask {
                    try await Self.runWorker(worker, seed: seed, iterations: iterations, corpusFolder: corpusFolder, work: work.url)
                }
            }
            var reports: [WorkerReport] = []
            for try await report in group { reports.append(report) }
            return reports.sorted { $0.worker < $1.worker }
        }

        var done = 0
        for report in reports {
            for line in report.summaries { print(line) }
            done += report.inputs
            for failure in report.failures { Issue.record(Comment(rawValue: failure)) }
            for (index, outcome) in report.crashes {
                let input = Corpus.input(index, seed: seed, corpus: corpus)
                let text = """
                    worker \(report.worker) \(outcome.timedOut ? "hung" : "crashed") on input \(index) (replay: \(Self.seedVariable)=\(seed) \
                    \(Self.inputVariable)=\(index)): \(input.description)
                    base64 of the input: \(Data(input.bytes).base64EncodedString())
                    \(outcome)
                    """
                Issue.record(Comment(rawValue: text))
            }
        }
        #expect(done == (replayed == nil ? iterations : 1), "the workers went through \(done) inputs")
        print("ArchiveFuzzTests: \(done) inputs in \(ContinuousClock.now - started)")
    }

    /// The inputs worker `worker` of `workers` takes, from `start` on (only the replayed one, if any).
    static func indices(worker: Int, of workers: Int, start: Int, iterations: Int) -> [Int] {
        if let input = ProcessInfo.processInfo.environment[inputVariable].flatMap({ Int($0) }) {
            return worker == 0 && input >= start ? [input] : []
        }
        return Array(stride(from: worker, to: iterations, by: workers)).filter { $0 >= start }
    }

    /// What one worker did, over all its child processes.
    struct WorkerReport: Sendable {
        var worker: Int
        var inputs = 0
        var summaries: [String] = []
        var failures: [String] = []
        var crashes: [(Int, ChildProcess.Outcome)] = []
    }

    /// Runs worker `worker`'s share of the inputs in child processes: after a crash or a hang,
    /// a new child goes on from the next input (until 20 crashes or hangs).
    static func runWorker(_ worker: Int, seed: UInt64, iterations: Int, corpusFolder: URL, work: URL) async throws -> WorkerReport {
        var report = WorkerReport(worker: worker)
        let progress = work.appendingPathComponent("progress-\(worker)")
        var start = 0
        while true {
            try Data(count: 8).write(to: progress)
            let watch = ProgressWatch(path: progress.path, patience: .seconds(30))
            let outcome = try await ChildProcess.runTests(
                matching: "ArchiveFuzzTests/fuzzWorker",
                environment: [
                    workerVariable: "\(worker)/\(workers)", corpusVariable: corpusFolder.path, progressVariable: progress.path,
                    startVariable: "\(start)", seedVariable: "\(seed)", iterationsVariable: "\(iterations)",
                ],
                outputIn: work, isStuck: { watch.isStuck() })
            let summaries = outcome.output.split(separator: "\n").filter { $0.hasPrefix("FUZZ-SUMMARY") }.map(String.init)
            report.summaries += summaries
            for line in summaries {
                if let field = line.split(separator: " ").first(where: { $0.hasPrefix("inputs=") }) { report.inputs += Int(field.dropFirst(7)) ?? 0 }
            }
            if !summaries.isEmpty {
                // The child went through its inputs; it failed if it recorded issues.
                if !outcome.succeeded { report.failures.append("worker \(worker): \(outcome)") }
                return report
            }
            guard let index = watch.current() else {
                report.failures.append("worker \(worker) ended before its first input: \(outcome)")
                return report
            }
            report.crashes.append((index, outcome))
            // The inputs the child went through, the one it crashed on included.
            report.inputs += indices(worker: worker, of: workers, start: start, iterations: iterations).filter { $0 <= index }.count
            if report.crashes.count >= 20 {
                report.failures.append("worker \(worker): 20 new crashes or hangs, gave up")
                return report
            }
            start = index + 1
        }
    }

    /// Watches a worker's progress file: stuck when the input number has not changed for `patience`.
    final class ProgressWatch: Sendable {
        let path: String
        let patience: Duration
        private let state = Mutex<(value: Int?, since: ContinuousClock.Instant)>((nil, .now))

        init(path: String, patience: Duration) {
            self.path = path
            self.patience = patience
        }

        func current() -> Int? {
            guard let data = FileManager.default.contents(atPath: path), data.count >= 8 else { return nil }
            let value = data.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            return value == 0 ? nil : value - 1
        }

        func isStuck() -> Bool {
            let value = current()
            return state.withLock { state in
                if value != state.value {
                    state = (value, .now)
                    return false
                }
                return ContinuousClock.now - state.since > patience
            }
        }
    }

    // MARK: A child

    /// Imports this worker's share of the inputs (run by the test above, never on its own).
    @Test(.enabled(if: ProcessInfo.processInfo.environment[workerVariable] != nil))
    func fuzzWorker() async throws {
        let environment = ProcessInfo.processInfo.environment
        let parts = try #require(environment[Self.workerVariable]).split(separator: "/")
        let worker = try #require(Int(parts[0]))
        let workers = try #require(Int(parts[1]))
        let corpusFolder = try #require(environment[Self.corpusVariable])
        let progressPath = try #require(environment[Self.progressVariable])
        let seed = SeededRandom.seed(environment: Self.seedVariable, default: 2026)
        let iterations = environment[Self.iterationsVariable].flatMap { Int($0) } ?? Self.defaultIterations
        let start = environment[Self.startVariable].flatMap { Int($0) } ?? 0
        let indices = Self.indices(worker: worker, of: workers, start: start, iterations: iterations)
        let corpus = try Corpus.read(from: URL(fileURLWithPath: corpusFolder))
        let progress = open(progressPath, O_WRONLY)
        try #require(progress >= 0)
        defer { close(progress) }

        // In the parent's folder: a child that crashes leaves its scene there, removed with it.
        let scene = try Scene("worker-\(worker)", in: URL(fileURLWithPath: corpusFolder).deletingLastPathComponent())
        let destination = scene.destination.path
        try FileManager.default.removeItem(at: scene.destination.appendingPathComponent("keep.txt"))
        let archive = scene.root.appendingPathComponent("input")
        let options = ArchiveImportOptions(durability: .consistent, existingItems: .refuse)
        var counts: [String: Int] = [:]
        var slowest: (duration: Duration, index: Int) = (.zero, -1)
        var issues = 0

        for index in indices {
            var marker = UInt64(index + 1).littleEndian
            _ = withUnsafeBytes(of: &marker) { pwrite(progress, $0.baseAddress, 8, 0) }
            let input = Corpus.input(index, seed: seed, corpus: corpus)
            try Data(input.bytes).write(to: archive)
            var problems: [String] = []
            let start = ContinuousClock.now
            do {
                let urls = try await DocumentArchiver.importItems(from: archive, into: scene.destination, options: options)
                counts["imported", default: 0] += 1
                problems += Self.checkImported(urls, in: destination)
            } catch {
                counts[error.code.name, default: 0] += 1
                if !Self.refusals.contains(error.code) { problems.append("refused with \(error.code): \(error)") }
                if !"\(error)".contains(archive.path) { problems.append("the message does not name the archive: \(error)") }
                let left = Tree.names(Array(destination.utf8)) ?? []
                if !left.isEmpty { problems.append("refused (\(error)) but left \(left.map { String(decoding: $0, as: UTF8.self) })") }
            }
            let duration = ContinuousClock.now - start
            if duration > slowest.duration { slowest = (duration, index) }
            problems += Self.checkSurroundings(scene)
            if !problems.isEmpty {
                issues += 1
                Issue.record(
                    """
                    input \(index) (replay: \(Self.seedVariable)=\(seed) \(Self.inputVariable)=\(index)): \(input.description)
                    \(problems.joined(separator: "\n"))
                    base64 of the input: \(Data(input.bytes).base64EncodedString())
                    """)
                if issues >= 20 { break }
            }
            // The next input starts from an empty destination.
            for name in Tree.names(Array(destination.utf8)) ?? [] {
                try? FileManager.default.removeItem(atPath: destination + "/" + String(decoding: name, as: UTF8.self))
            }
        }
        let tally = counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("FUZZ-SUMMARY worker=\(worker) inputs=\(indices.count) \(tally) slowest=\(slowest.duration) (input \(slowest.index))")
    }

    /// What is wrong with a successful import: items not in the destination, something else
    /// left there, a link leading out of it, a loop of links, anything but files, folders and links.
    static func checkImported(_ urls: [URL], in destination: String) -> [String] {
        var problems: [String] = []
        let names = (Tree.names(Array(destination.utf8)) ?? []).map { String(decoding: $0, as: UTF8.self) }
        if names != urls.map(\.lastPathComponent).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            problems.append("the destination holds \(names), the import returned \(urls.map(\.lastPathComponent))")
        }
        for url in urls where url.deletingLastPathComponent().standardizedFileURL.path != destination {
            problems.append("an item was imported elsewhere: \(url.path)")
        }
        for link in Tree.links(under: destination) {
            guard let resolved = Tree.resolve(String(link.dropFirst(destination.count + 1)), below: destination) else {
                problems.append("the link \(link) loops")
                continue
            }
            if !(resolved + "/").hasPrefix(destination + "/") { problems.append("the link \(link) leads to \(resolved)") }
        }
        for (path, description) in Tree.describe(destination) where description.hasPrefix("special") {
            problems.append("\(path) is \(description)")
        }
        return problems
    }

    /// What changed beside the destination: the scene's root holds the input, the destination
    /// and `outside` with its secret, as they were.
    static func checkSurroundings(_ scene: Scene) -> [String] {
        var problems: [String] = []
        let root = (Tree.names(Array(scene.root.path.utf8)) ?? []).map { String(decoding: $0, as: UTF8.self) }
        if root != ["Imports", "input", "outside"] { problems.append("the folder around the destination holds \(root)") }
        let outside = Tree.describe(scene.outside.path)
        if outside != ["secret.txt": "file 7 bytes, 1 links, crc \(CRC32.checksum(Array("secret\n".utf8)))"] {
            problems.append("the sibling folder changed: \(outside)")
        }
        return problems
    }
}

/// The archives the fuzz run mutates, and the mutations.
enum Corpus {
    /// Writes the valid archives: `Trip.note` (with a link) exported in every available format,
    /// as a plain tar and as a zip of STORED members (names and data in clear, where
    /// mutations reach them). Returns them in the order ``read(from:)`` gives.
    static func write(in folder: URL) async throws -> [[UInt8]] {
        let manager = FileManager.default
        let source = folder.appendingPathComponent("source")
        let package = source.appendingPathComponent("Trip.note")
        try TripNote.make(at: package)
        try manager.createSymbolicLink(atPath: package.appendingPathComponent("attachments/current").path, withDestinationPath: "map.bin")
        var index = 0
        func next(_ ext: String) -> URL {
            index += 1
            return folder.appendingPathComponent(String(format: "%02d.%@", index, ext))
        }
        for format in ArchiveFormat.available {
            _ = try await DocumentArchiver.export(
                itemsAt: [package], to: next(format.fileExtension),
                options: ArchiveExportOptions(format: format, isDeterministic: true, durability: .consistent))
        }
        var members: [Member] = [.folder("Trip.note"), .folder("Trip.note/attachments")]
        for (path, contents) in TripNote.files { members.append(.file("Trip.note/" + path, bytes: contents)) }
        members.append(.symbolicLink("Trip.note/attachments/current", to: "map.bin"))
        try LibArchiveWriter.write(members, to: next("tar"), container: .tar)
        try LibArchiveWriter.write(members, to: next("zip"), container: .zip, storing: true)
        try manager.removeItem(at: source)
        return try read(from: folder)
    }

    static func read(from folder: URL) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.first?.isNumber == true }.sorted()
            .map { Array(try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    struct Input: CustomStringConvertible {
        var base: Int
        var bytes: [UInt8]
        var mutations: [String]
        var description: String { "archive \(base) of the corpus, \(bytes.count) bytes after \(mutations.joined(separator: ", "))" }
    }

    /// Input `index` of the run with `seed`: a corpus archive with one to four mutations.
    static func input(_ index: Int, seed: UInt64, corpus: [[UInt8]]) -> Input {
        var mixer = SeededRandom(seed: seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        var random = SeededRandom(seed: mixer.next())
        let base = Int.random(in: 0..<corpus.count, using: &random)
        var bytes = corpus[base]
        var mutations: [String] = []
        let count = [1, 1, 1, 2, 2, 3, 4].randomElement(using: &random)!
        for _ in 0..<count {
            guard !bytes.isEmpty else { break }
            // Where: anywhere, or near the start or the end (headers, a zip's central directory).
            let position: Int =
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6: Int.random(in: 0..<bytes.count, using: &random)
                case 6..<8: Int.random(in: 0..<min(bytes.count, 1_024), using: &random)
                default: bytes.count - 1 - Int.random(in: 0..<min(bytes.count, 1_024), using: &random)
                }
            switch Int.random(in: 0..<9, using: &random) {
            case 0:
                let bit = Int.random(in: 0..<8, using: &random)
                bytes[position] ^= 1 << bit
                mutations.append("flip bit \(bit) at \(position)")
            case 1:
                let value = UInt8.random(in: 0...255, using: &random)
                bytes[position] = value
                mutations.append("set \(position) to \(value)")
            case 2:
                let value = [0, 0xFF, 0x7F, 0x80, UInt8(ascii: "/"), UInt8(ascii: "."), 0x20].randomElement(using: &random)!
                bytes[position] = value
                mutations.append("set \(position) to \(value)")
            case 3:
                let value = [0, 1, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFF0].randomElement(using: &random)!
                let width = Bool.random(using: &random) ? 2 : 4
                for offset in 0..<width where position + offset < bytes.count {
                    bytes[position + offset] = UInt8(truncatingIfNeeded: value >> (8 * offset))
                }
                mutations.append("write \(value) in \(width) bytes at \(position)")
            case 4:
                let inserted = (0..<Int.random(in: 1...32, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                bytes.insert(contentsOf: inserted, at: position)
                mutations.append("insert \(inserted.count) bytes at \(position)")
            case 5:
                let length = min(Int.random(in: 1...64, using: &random), bytes.count - position)
                bytes.removeSubrange(position..<(position + length))
                mutations.append("delete \(length) bytes at \(position)")
            case 6:
                bytes.removeSubrange(position...)
                mutations.append("truncate at \(position)")
            case 7:
                // Splice: a piece of another archive of the corpus over this one.
                let other = Int.random(in: 0..<corpus.count, using: &random)
                let donor = corpus[other]
                let length = min(Int.random(in: 8...256, using: &random), donor.count)
                let from = Int.random(in: 0...(donor.count - length), using: &random)
                let end = min(bytes.count, position + length)
                bytes.replaceSubrange(position..<end, with: donor[from..<(from + length)])
                mutations.append("splice \(length) bytes of archive \(other) from \(from) at \(position)")
            default:
                // Duplicate a piece of this archive elsewhere in it.
                let length = min(Int.random(in: 1...512, using: &random), bytes.count - position)
                let piece = Array(bytes[position..<(position + length)])
                let at = Int.random(in: 0...bytes.count, using: &random)
                bytes.insert(contentsOf: piece, at: at)
                mutations.append("copy \(length) bytes from \(position) to \(at)")
            }
        }
        // A plain tar's headers carry checksums that refuse almost every changed header: half
        // the time, they are set right again, so that the changed fields reach the reader.
        if bytes.count >= 512, Array(corpus[base][257..<262]) == Array("ustar".utf8), Bool.random(using: &random) {
            repairTarChecksums(&bytes)
            mutations.append("repair the tar checksums")
        }
        return Input(base: base, bytes: bytes, mutations: mutations)
    }

    /// Sets the checksum of every block that looks like a ustar header (at a multiple of 512).
    static func repairTarChecksums(_ bytes: inout [UInt8]) {
        var offset = 0
        while offset + 512 <= bytes.count {
            if Array(bytes[(offset + 257)..<(offset + 262)]) == Array("ustar".utf8) {
                for index in 148..<156 { bytes[offset + index] = UInt8(ascii: " ") }
                let sum = bytes[offset..<(offset + 512)].reduce(0) { $0 + Int($1) }
                let digits = Array(String(sum, radix: 8).utf8)
                let field = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 6 - digits.count)) + digits.suffix(6) + [0, UInt8(ascii: " ")]
                for (index, byte) in field.enumerated() { bytes[offset + 148 + index] = byte }
            }
            offset += 512
        }
    }
}
