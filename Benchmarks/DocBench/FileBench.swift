#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation
import Synchronization

/// The single-file benchmark: replace one file of `size` bytes, many times.
///
/// Each variant saves its own file in its own sub-folder of the TOPDIR work folder; the variants
/// take turns (order rotated every round) and the file system is synced, untimed, after every
/// save, so each save starts with nothing dirty and no variant pays for another's writeback.
final class FileBench {
    enum Variant: String, CaseIterable {
        case documentKit = "dk"
        case documentKitConsistent = "dk-consistent"
        case foundation = "foundation"
        case floor = "floor"

        var title: String {
            switch self {
            case .documentKit: "(a) DocumentKit `FileWrapper(regularFileWithContents:).write(to:)`, durable"
            case .documentKitConsistent: "(a′) the same with `durability: .consistent` (no fsync)"
            case .foundation: "(b) Foundation `Data.write(to:options: .atomic)`"
            case .floor: "(c) floor: open tmp + write + fsync + close + rename + fsync(dir)"
            }
        }
    }

    let size: Int
    let iterations: Int
    let work: WorkDirectory
    let variants = Variant.allCases

    init(size: Int, iterations: Int, work: WorkDirectory) {
        self.size = size
        self.iterations = iterations
        self.work = work
    }

    func run() throws -> [Variant: Samples] {
        var result: [Variant: Samples] = [:]
        var folders: [Variant: (path: String, fd: CInt)] = [:]
        defer { for (_, folder) in folders { close(folder.fd) } }
        var contents = Data(repeating: UInt8(ascii: "f"), count: size)
        for variant in variants {
            let folder = try work.makeSubdirectory("file-" + variant.rawValue)
            folders[variant] = folder
            try contents.write(to: URL(fileURLWithPath: folder.path + "/doc.txt"))
        }
        work.syncFileSystem()
        progress("docbench file: \(iterations) saves of \(size) B per variant")
        for round in 0...iterations {
            contents[0] = UInt8(truncatingIfNeeded: round)
            let order = (0..<variants.count).map { variants[($0 + round) % variants.count] }
            for variant in order {
                let folder = folders[variant]!
                let url = URL(fileURLWithPath: folder.path + "/doc.txt")
                let elapsed: UInt64
                switch variant {
                case .documentKit:
                    let wrapper = FileWrapper(regularFileWithContents: contents)
                    let start = now()
                    try wrapper.write(to: url)
                    elapsed = now() - start
                case .documentKitConsistent:
                    let wrapper = FileWrapper(regularFileWithContents: contents)
                    let start = now()
                    try wrapper.write(to: url, options: SaveOptions(durability: .consistent))
                    elapsed = now() - start
                case .foundation:
                    let start = now()
                    try contents.write(to: url, options: .atomic)
                    elapsed = now() - start
                case .floor:
                    let start = now()
                    try Self.rawReplace(in: folder.fd, contents)
                    elapsed = now() - start
                }
                work.syncFileSystem()
                if round > 0 { result[variant, default: Samples()].append(elapsed) }
            }
        }
        for variant in variants {
            let saved = FileManager.default.contents(atPath: folders[variant]!.path + "/doc.txt")
            guard saved == contents else { throw BenchError(description: "\(variant.rawValue): the file does not hold the last save") }
        }
        return result
    }

    /// The floor under `writers` at once: as many threads, each replacing its own file (in a
    /// folder of its own) `iterations` times back to back, as the benchmark's concurrent PUTs
    /// save their own notes; the latencies of every save, all threads together.
    func concurrentFloor(writers: Int) throws -> Samples {
        let contents = Data(repeating: UInt8(ascii: "f"), count: size)
        var folders: [(path: String, fd: CInt)] = []
        defer { for folder in folders { close(folder.fd) } }
        for writer in 0..<writers {
            let folder = try work.makeSubdirectory("file-floor-\(writers)-\(writer)")
            folders.append(folder)
            try contents.write(to: URL(fileURLWithPath: folder.path + "/doc.txt"))
        }
        work.syncFileSystem()
        progress("docbench file: \(iterations) raw durable saves by each of \(writers) writers at once")
        let results = Mutex<(samples: [UInt64], failure: BenchError?)>(([], nil))
        let done = DispatchGroup()
        let iterations = iterations
        for folder in folders {
            done.enter()
            let fd = folder.fd
            Thread.detachNewThread {
                var mine: [UInt64] = []
                do throws(BenchError) {
                    for round in 0...iterations {
                        let start = now()
                        try Self.rawReplace(in: fd, contents)
                        if round > 0 { mine.append(now() - start) }
                    }
                } catch {
                    results.withLock { $0.failure = error }
                }
                results.withLock { $0.samples += mine }
                done.leave()
            }
        }
        done.wait()
        let (values, failure) = results.withLock { ($0.samples, $0.failure) }
        if let failure { throw failure }
        var samples = Samples()
        for value in values { samples.append(value) }
        return samples
    }

    /// The floor of `atomic_replace.c`: a fixed temporary name, the directory already open.
    private static func rawReplace(in directory: CInt, _ data: Data) throws(BenchError) {
        let fd = try check(openat(directory, ".doc.txt.tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644), "create tmp")
        var failure: BenchError?
        data.withUnsafeBytes { bytes in
            do throws(BenchError) { try writeAll(fd, bytes.baseAddress!, bytes.count, "write tmp") } catch { failure = error }
        }
        if let failure { throw failure }
        try check(fsync(fd), "fsync tmp")
        try check(close(fd), "close tmp")
        try check(renameat(directory, ".doc.txt.tmp", directory, "doc.txt"), "rename")
        try check(fsync(directory), "fsync dir")
    }

    func markdown(_ result: [Variant: Samples]) -> String {
        var lines: [String] = []
        lines.append("### One file of \(size.formatted()) B replaced")
        lines.append("")
        lines.append("\(iterations) timed saves per variant (after 1 warm-up), taking turns.")
        lines.append("")
        lines.append("| variant | min | median | p90 | max |")
        lines.append("|---|---|---|---|---|")
        for variant in variants {
            guard let s = result[variant] else { continue }
            lines.append("| \(variant.title) | \(formatDuration(s.min)) | **\(formatDuration(s.median))** | \(formatDuration(s.p90)) | \(formatDuration(s.max)) |")
        }
        lines.append("")
        lines.append("| ratio (medians) | value |")
        lines.append("|---|---|")
        if let a = result[.documentKit], let b = result[.foundation], let c = result[.floor] {
            lines.append("| a / b: DocumentKit durable vs Foundation `.atomic` | \(formatRatio(a.median, b.median)) |")
            lines.append("| a / c: DocumentKit durable vs floor | \(formatRatio(a.median, c.median)) |")
        }
        if let a = result[.documentKitConsistent], let b = result[.foundation] {
            lines.append("| a′ / b: DocumentKit consistent vs Foundation `.atomic` | \(formatRatio(a.median, b.median)) |")
        }
        return lines.joined(separator: "\n")
    }
}
