#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Foundation

// MARK: - Errors and raw calls

/// A failed step of the benchmark itself (not a measured result).
struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// Throws with the failed call's name and `strerror(errno)` when `result` is negative.
@discardableResult
@inline(__always)
func check(_ result: CInt, _ what: @autoclosure () -> String) throws(BenchError) -> CInt {
    if result < 0 {
        let code = dk_errno()
        throw BenchError(description: "\(what()): \(String(cString: strerror(code))) (errno \(code))")
    }
    return result
}

/// Writes all of `count` bytes at `bytes` to `fd`.
@inline(__always)
func writeAll(_ fd: CInt, _ bytes: UnsafeRawPointer, _ count: Int, _ what: @autoclosure () -> String) throws(BenchError) {
    var offset = 0
    while offset < count {
        let written = Glibc.write(fd, bytes + offset, count - offset)
        if written < 0 {
            if dk_errno() == EINTR { continue }
            try check(-1, what())
        }
        offset += written
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
@inline(__always)
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Member names `f000000`, `f000001`, ... as C strings in fixed 16-byte slots (no allocation
/// per call, as in `pkgsave.c`).
final class NameTable {
    let count: Int
    private let storage: UnsafeMutablePointer<CChar>

    init(count: Int) {
        self.count = count
        storage = .allocate(capacity: count * 16)
        storage.initialize(repeating: 0, count: count * 16)
        for i in 0..<count {
            let name = Self.name(i)
            name.withCString { source in
                _ = strncpy(storage + i * 16, source, 15)
            }
        }
    }

    deinit { storage.deallocate() }

    /// The name of member `i` as a Swift string.
    static func name(_ i: Int) -> String {
        let digits = String(i)
        return "f" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    @inline(__always)
    subscript(i: Int) -> UnsafePointer<CChar> { UnsafePointer(storage + i * 16) }
}

/// User and system CPU time of this process so far, in nanoseconds.
@inline(__always)
func cpuTimes() -> (user: UInt64, system: UInt64) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
    return (ns(usage.ru_utime), ns(usage.ru_stime))
}

// MARK: - Statistics

/// Timings of one variant, in nanoseconds.
struct Samples {
    private(set) var values: [UInt64] = []

    mutating func append(_ value: UInt64) { values.append(value) }

    var count: Int { values.count }
    private var sorted: [UInt64] { values.sorted() }

    /// Nearest-rank percentile (`p` in 0...1).
    func percentile(_ p: Double) -> UInt64 {
        let s = sorted
        guard !s.isEmpty else { return 0 }
        let rank = Swift.max(1, Int((p * Double(s.count)).rounded(.up)))
        return s[Swift.min(rank, s.count) - 1]
    }

    var min: UInt64 { values.min() ?? 0 }
    var max: UInt64 { values.max() ?? 0 }
    var median: UInt64 { percentile(0.5) }
    var p90: UInt64 { percentile(0.9) }
}

/// A duration with three significant digits: `61.2 ms`, `198 µs`, `1.40 s`.
func formatDuration(_ ns: UInt64) -> String {
    let value = Double(ns)
    let (scaled, unit): (Double, String) =
        value >= 1e9 ? (value / 1e9, "s") : value >= 1e6 ? (value / 1e6, "ms") : value >= 1e3 ? (value / 1e3, "µs") : (value, "ns")
    let digits = scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2
    return String(format: "%.\(digits)f %@", scaled, unit)
}

/// A ratio such as `1.23×`.
func formatRatio(_ numerator: UInt64, _ denominator: UInt64) -> String {
    guard denominator > 0 else { return "n/a" }
    let r = Double(numerator) / Double(denominator)
    return String(format: r >= 100 ? "%.0f×" : r >= 10 ? "%.1f×" : "%.2f×", r)
}

func ratio(_ numerator: UInt64, _ denominator: UInt64) -> Double {
    denominator > 0 ? Double(numerator) / Double(denominator) : .nan
}

/// Progress goes to standard error so that standard output is only the report.
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

// MARK: - Work directory and machine facts

/// A fresh folder for one benchmark run, with the ext4 TOPDIR flag where possible so that each
/// variant's sub-folder gets a block group of its own (the limits research, property 3).
final class WorkDirectory {
    let path: String
    let fd: CInt
    /// Whether `chattr +T` succeeded.
    let hasTopDirFlag: Bool
    private let keep: Bool

    init(base: String?, keep: Bool) throws(BenchError) {
        let parent = base ?? "/tmp"
        var template = Array("\(parent)/docbench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            try check(-1, "creating a work folder in \(parent)")
            fatalError("unreachable")
        }
        path = URL(fileURLWithPath: String(cString: made)).resolvingSymlinksInPath().path
        hasTopDirFlag = Self.setTopDirFlag(path)
        fd = try check(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "opening \(path)")
        self.keep = keep
    }

    /// Creates a sub-folder (a new top-level directory for the Orlov allocator) and opens it.
    func makeSubdirectory(_ name: String) throws(BenchError) -> (path: String, fd: CInt) {
        try check(mkdirat(fd, name, 0o755), "creating \(path)/\(name)")
        let sub = try check(openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "opening \(path)/\(name)")
        return (path + "/" + name, sub)
    }

    /// Flushes the whole file system (untimed), so that every save starts with nothing dirty.
    func syncFileSystem() { _ = dk_syncfs(fd) }

    func remove() {
        close(fd)
        if keep {
            progress("docbench: kept the work folder \(path)")
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    private static func setTopDirFlag(_ path: String) -> Bool {
        for tool in ["/usr/bin/chattr", "/bin/chattr", "/sbin/chattr", "/usr/sbin/chattr"]
        where FileManager.default.isExecutableFile(atPath: tool) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = ["+T", path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        return false
    }
}

/// What the figures depend on: kernel, file system and mount options of the work folder, CPUs.
struct MachineFacts {
    let kernel: String
    let fileSystem: String
    let mountOptions: String
    let device: String
    let cpus: Int
    let cpuModel: String

    init(workPath: String) {
        var names = utsname()
        uname(&names)
        kernel = withUnsafeBytes(of: names.release) { raw in
            String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
        cpus = ProcessInfo.processInfo.activeProcessorCount
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        cpuModel = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?" } ?? "?"
        // The mount with the longest mount point that contains the work folder.
        var best: (point: String, type: String, options: String, device: String) = ("", "?", "?", "?")
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 4 else { continue }
            let point = fields[1]
            let contains = point == "/" || workPath == point || workPath.hasPrefix(point + "/")
            if contains && point.count >= best.point.count {
                best = (point, fields[2], fields[3], fields[0])
            }
        }
        fileSystem = best.type
        mountOptions = best.options
        device = best.device + " on " + best.point
    }

    /// Whether the ext4 file system has a journal (no jbd2 thread for it means none).
    var journal: String {
        guard fileSystem == "ext4" else { return "n/a" }
        let name = device.split(separator: " ").first.map { String($0.split(separator: "/").last ?? "") } ?? ""
        let path = "/sys/fs/ext4/\(name)/journal_task"
        guard let task = try? String(contentsOfFile: path, encoding: .utf8) else { return "unknown" }
        let trimmed = task.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed == "<none>" ? "none" : "yes (\(trimmed))"
    }

    func markdown(workPath: String, topDir: Bool) -> String {
        """
        | fact | value |
        |---|---|
        | kernel | \(kernel) |
        | CPUs | \(cpus) × \(cpuModel) |
        | work folder | `\(workPath)` (ext4 TOPDIR flag: \(topDir ? "set" : "not set")) |
        | file system | \(fileSystem) (\(device)), options `\(mountOptions)`, journal: \(journal) |
        """
    }
}

// MARK: - The shape every benchmark has

/// A benchmark: runs its variants, then writes its Markdown table.
protocol Benchmark {
    associatedtype Result
    func run() throws -> Result
    func markdown(_ result: Result) -> String
}

extension PackageBench: Benchmark {}
extension FileBench: Benchmark {}
extension CoordinationBench: Benchmark {}
extension NotificationBench: Benchmark {}
extension RoundTripBench: Benchmark {}
extension PresenterMemoryBench: Benchmark {}
