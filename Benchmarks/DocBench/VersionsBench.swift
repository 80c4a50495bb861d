#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

/// The version-store benchmark of issue #5: disk used and time taken by `saves` saves of a
/// package of `count` files of `size` bytes that changes one file per save, with every replaced
/// version kept (B) against the same saves without versions (A).
///
/// Each round builds two fresh libraries, each with its own package (untimed), and does the
/// saves of A and B interleaved (A₁ B₁, B₂ A₂, …: the order alternates every save), each save
/// followed by an untimed `syncfs`, so that slow moments of the machine fall on both. After the
/// saves it measures the disk each library uses, how long listing the kept versions takes, and
/// what keeping a version by a full copy of the package (`FileManager.copyItem`) would cost.
final class VersionsBench {
    enum Side: String, CaseIterable {
        case plain = "A"
        case versioned = "B"

        var title: String {
            switch self {
            case .plain: "A: `tree.write(to:)`, no versions"
            case .versioned: "B: `VersionStore.save(_:to:keepingReplacedAs: .save)`, all kept"
            }
        }
    }

    /// Disk use of a folder, counting each inode once however many names it has.
    struct Disk {
        var inodes = 0
        var regularFiles = 0
        var directories = 0
        /// `st_blocks × 512` summed over the distinct inodes.
        var bytes: Int64 = 0
        /// The part of ``bytes`` in folders.
        var directoryBytes: Int64 = 0
    }

    struct Round {
        var times: [Side: Samples] = [:]
        var totals: [Side: UInt64] = [:]
        var disk: [Side: Disk] = [:]
        /// `versions(ofItemAt:)` with every version kept.
        var listing = Samples()
        var listed = 0
        /// `FileManager.copyItem` of the package, and the `syncfs` that makes the copy durable.
        var copy = Samples()
        var copyFlush = Samples()
        var copyDisk = Disk()
    }

    struct Result {
        var rounds: [Round] = []
        /// A freshly built package, before any save.
        var package = Disk()
    }

    let count: Int
    let size: Int
    let saves: Int
    let rounds: Int
    let copies: Int
    let work: WorkDirectory
    /// Leaves each round's libraries in the work folder (`--keep`) instead of removing them.
    let keep: Bool
    private let names: NameTable

    init(count: Int, size: Int, saves: Int, rounds: Int, copies: Int, work: WorkDirectory, keep: Bool = false) {
        self.count = count
        self.size = size
        self.saves = Swift.min(saves, count)  // a different member every save
        self.rounds = rounds
        self.copies = copies
        self.work = work
        self.keep = keep
        names = NameTable(count: count)
    }

    // MARK: Running

    func run() throws -> Result {
        var result = Result()
        for round in 1...rounds {
            var measured = Round()
            var libraries: [Side: String] = [:]
            for side in Side.allCases {
                let folder = try work.makeSubdirectory("r\(round)-\(side.rawValue)")
                close(folder.fd)
                libraries[side] = folder.path
                progress("docbench versions: round \(round): building \(side.rawValue)/pkg (\(count) × \(size) B)")
                let fd = try check(open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open \(folder.path)")
                defer { close(fd) }
                try buildBenchPackage(in: fd, path: folder.path, count: count, size: size, names: names)
            }
            work.syncFileSystem()
            if round == 1 { result.package = try diskUsage(of: libraries[.plain]! + "/pkg") }

            let items = libraries.mapValues { URL(fileURLWithPath: $0 + "/pkg") }
            var trees = try items.mapValues { url throws(DocumentKitError) in try FileWrapper(contentsOf: url) }
            let store = VersionStore(libraryURL: URL(fileURLWithPath: libraries[.versioned]!), pruning: .keepAll)
            for save in 0..<saves {
                let changed = NameTable.name(changedMember(save))
                let data = contents(round: round, save: save)
                let order: [Side] = (save + round) % 2 == 0 ? [.plain, .versioned] : [.versioned, .plain]
                for side in order {
                    var tree = trees[side]!
                    tree[changed] = FileWrapper(regularFileWithContents: data)
                    let start = now()
                    switch side {
                    case .plain: tree = try tree.write(to: items[side]!)
                    case .versioned: tree = try store.save(tree, to: items[side]!, keepingReplacedAs: .save).saved
                    }
                    let elapsed = now() - start
                    trees[side] = tree
                    work.syncFileSystem()
                    measured.times[side, default: Samples()].append(elapsed)
                    measured.totals[side, default: 0] += elapsed
                }
                if save % 10 == 9 || save == saves - 1 {
                    progress("docbench versions: round \(round): \(save + 1) saves, A \(formatDuration(measured.totals[.plain]!)), B \(formatDuration(measured.totals[.versioned]!))")
                }
            }
            for side in Side.allCases { try verify(items[side]!.path, round: round) }

            // Listing the kept versions.
            for _ in 0..<11 {
                let start = now()
                let listing = try store.versions(ofItemAt: items[.versioned]!)
                measured.listing.append(now() - start)
                guard listing.problems.isEmpty else { throw BenchError(description: "the store reports problems: \(listing.problems)") }
                measured.listed = listing.others.count
            }
            guard measured.listed == saves else {
                throw BenchError(description: "the store lists \(measured.listed) versions after \(saves) saves with all kept")
            }

            progress("docbench versions: round \(round): measuring disk use")
            for side in Side.allCases { measured.disk[side] = try diskUsage(of: libraries[side]!) }

            // The alternative: a full copy of the package per version.
            let copiesFolder = libraries[.plain]! + "/copies"
            try check(mkdir(copiesFolder, 0o755), "mkdir \(copiesFolder)")
            for copy in 1...copies {
                let target = URL(fileURLWithPath: copiesFolder + "/\(copy)")
                let start = now()
                try FileManager.default.copyItem(at: items[.plain]!, to: target)
                let copied = now()
                work.syncFileSystem()
                measured.copy.append(copied - start)
                measured.copyFlush.append(now() - copied)
                progress("docbench versions: round \(round): full copy \(copy): \(formatDuration(copied - start)) + syncfs \(formatDuration(now() - copied))")
            }
            measured.copyDisk = try diskUsage(of: copiesFolder)
            result.rounds.append(measured)

            if !keep {
                progress("docbench versions: round \(round): removing the libraries")
                for side in Side.allCases { try removeTree(libraries[side]!) }
            }
        }
        return result
    }

    /// The member changed by save `save` (7919 is prime to 10,000: a different one every save).
    private func changedMember(_ save: Int) -> Int { (save * 7919 + 13) % count }

    /// New contents of the changed member: the round and save in the first 16 bytes.
    private func contents(round: Int, save: Int) -> Data {
        var data = Data(repeating: UInt8(ascii: "a") + UInt8(save % 26), count: size)
        let marker = Array("r\(round)s\(save);".utf8.prefix(size))
        data.replaceSubrange(0..<marker.count, with: marker)
        return data
    }

    /// The package has N members, the last save's change in place.
    private func verify(_ path: String, round: Int) throws(BenchError) {
        let members = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard members.count == count else { throw BenchError(description: "\(path) has \(members.count) members, expected \(count)") }
        let last = saves - 1
        let name = NameTable.name(changedMember(last))
        guard FileManager.default.contents(atPath: path + "/" + name) == contents(round: round, save: last) else {
            throw BenchError(description: "\(path)/\(name) does not hold the last save's contents")
        }
    }

    // MARK: Disk

    /// Distinct inodes under `path` (itself included), by `fstatat` of every name.
    func diskUsage(of path: String) throws(BenchError) -> Disk {
        var disk = Disk()
        var seen = Set<UInt64>()
        var info = stat()
        try check(lstat(path, &info), "stat \(path)")
        let device = info.st_dev
        func count(_ info: stat) {
            guard seen.insert(UInt64(info.st_ino)).inserted else { return }
            disk.inodes += 1
            disk.bytes += Int64(info.st_blocks) * 512
            switch info.st_mode & S_IFMT {
            case S_IFREG: disk.regularFiles += 1
            case S_IFDIR:
                disk.directories += 1
                disk.directoryBytes += Int64(info.st_blocks) * 512
            default: break
            }
        }
        count(info)
        try walk(path) { (folder: CInt, name: UnsafePointer<CChar>, isDirectory: Bool) throws(BenchError) in
            var entry = stat()
            try check(fstatat(folder, name, &entry, AT_SYMLINK_NOFOLLOW), "stat in \(path)")
            guard entry.st_dev == device else { throw BenchError(description: "\(path) spans more than one file system") }
            count(entry)
        }
        return disk
    }

    /// Removes `path` and everything in it (untimed; a store of 100 versions of a 10,000-file
    /// package has a million names).
    func removeTree(_ path: String) throws(BenchError) {
        try walk(path, after: { (folder: CInt, name: UnsafePointer<CChar>, isDirectory: Bool) throws(BenchError) in
            try check(unlinkat(folder, name, isDirectory ? AT_REMOVEDIR : 0), "remove in \(path)")
        })
        try check(rmdir(path), "rmdir \(path)")
    }

    /// Calls `visit` for every name under the folder `path` (before descending into a folder) and
    /// `after` once a folder's contents have been walked, each with the open parent folder.
    private func walk(
        _ path: String,
        _ visit: (CInt, UnsafePointer<CChar>, Bool) throws(BenchError) -> Void = { _, _, _ in },
        after: (CInt, UnsafePointer<CChar>, Bool) throws(BenchError) -> Void = { _, _, _ in }
    ) throws(BenchError) {
        let fd = try check(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open \(path)")
        try walk(folder: fd, path: path, visit, after)
    }

    /// Walks the open folder `fd` (and closes it).
    private func walk(
        folder fd: CInt, path: String,
        _ visit: (CInt, UnsafePointer<CChar>, Bool) throws(BenchError) -> Void,
        _ after: (CInt, UnsafePointer<CChar>, Bool) throws(BenchError) -> Void
    ) throws(BenchError) {
        guard let directory = fdopendir(fd) else {
            close(fd)
            try check(-1, "opendir \(path)")
            return
        }
        defer { closedir(directory) }
        // Names first, then the work: removing while reading a folder can skip entries.
        var entries: [(name: [CChar], isDirectory: Bool)] = []
        while let entry = readdir(directory) {
            var name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 })
            }
            if name == [46] || name == [46, 46] { continue }  // "." and ".."
            name.append(0)
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                try check(fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW), "stat in \(path)")
                isDirectory = info.st_mode & S_IFMT == S_IFDIR
            }
            entries.append((name, isDirectory))
        }
        for entry in entries {
            try entry.name.withUnsafeBufferPointer { (name) throws(BenchError) in
                try visit(fd, name.baseAddress!, entry.isDirectory)
                if entry.isDirectory {
                    let child = try check(openat(fd, name.baseAddress!, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), "open in \(path)")
                    try walk(folder: child, path: path + "/" + String(cString: name.baseAddress!), visit, after)
                }
                try after(fd, name.baseAddress!, entry.isDirectory)
            }
        }
    }
}

extension VersionsBench: Benchmark {}

// MARK: - Report

extension VersionsBench {
    func markdown(_ result: Result) -> String {
        var lines: [String] = []
        lines.append("### Versions kept: \(saves) saves of a \(count.formatted())-file package (\(size.formatted()) B each), one file changed per save")
        lines.append("")
        lines.append(
            "\(rounds) round(s); each builds two fresh libraries and does A's and B's saves interleaved (the order alternating "
                + "every save), `syncfs` (untimed) after every save; durable saves; B's store keeps every version (`PruningSchedule.keepAll`). "
                + "Fresh package: \(formatBytes(result.package.bytes)) in \(result.package.regularFiles.formatted()) files, "
                + "of which \(formatBytes(result.package.directoryBytes)) is its folder.")
        lines.append("")
        lines.append("| round | variant | total | median | p90 | max | median of saves 1–10 / last 10 |")
        lines.append("|---|---|---|---|---|---|---|")
        for (index, round) in result.rounds.enumerated() {
            for side in Side.allCases {
                guard let s = round.times[side] else { continue }
                let head = Samples(s.values.prefix(10)), tail = Samples(s.values.suffix(10))
                lines.append(
                    "| \(index + 1) | \(side.title) | \(formatDuration(round.totals[side] ?? 0)) | **\(formatDuration(s.median))** | \(formatDuration(s.p90)) "
                        + "| \(formatDuration(s.max)) | \(formatDuration(head.median)) / \(formatDuration(tail.median)) |")
            }
        }
        lines.append("")
        lines.append("| round | disk A: inodes, files, bytes (in folders) | disk B: inodes, files, bytes (in folders) | disk B / A | extra files per kept version | extra bytes per kept version (in folders) |")
        lines.append("|---|---|---|---|---|---|")
        for (index, round) in result.rounds.enumerated() {
            let a = round.disk[.plain] ?? Disk(), b = round.disk[.versioned] ?? Disk()
            let files = Double(b.regularFiles - a.regularFiles) / Double(saves)
            let directories = Double(b.directories - a.directories) / Double(saves)
            lines.append(
                "| \(index + 1) | \(a.inodes.formatted()), \(a.regularFiles.formatted()), \(formatBytes(a.bytes)) (\(formatBytes(a.directoryBytes))) "
                    + "| \(b.inodes.formatted()), \(b.regularFiles.formatted()), \(formatBytes(b.bytes)) (\(formatBytes(b.directoryBytes))) "
                    + "| **\(String(format: "%.2f×", Double(b.bytes) / Double(a.bytes)))** "
                    + "| \(String(format: "%.2f", files)) (+ \(String(format: "%.2f", directories)) folders) "
                    + "| **\(formatBytes((b.bytes - a.bytes) / Int64(saves)))** (\(formatBytes((b.directoryBytes - a.directoryBytes) / Int64(saves)))) |")
        }
        lines.append("")
        lines.append("| round | time B / A (totals) | B / A (medians) | B / A (p90) | `versions(ofItemAt:)`, \(saves) kept: median (min) |")
        lines.append("|---|---|---|---|---|")
        for (index, round) in result.rounds.enumerated() {
            guard let a = round.times[.plain], let b = round.times[.versioned] else { continue }
            lines.append(
                "| \(index + 1) | **\(formatRatio(round.totals[.versioned] ?? 0, round.totals[.plain] ?? 0))** | \(formatRatio(b.median, a.median)) "
                    + "| \(formatRatio(b.p90, a.p90)) | \(formatDuration(round.listing.median)) (\(formatDuration(round.listing.min))) |")
        }
        lines.append("")
        lines.append("What keeping each version by a full copy of the package would cost instead (`FileManager.copyItem`, \(copies) per round, then `syncfs` to make it durable):")
        lines.append("")
        lines.append("| round | copy, median | + syncfs, median | bytes per copy | files per copy | copy bytes / B's extra bytes per version | (A + copy + syncfs) / A, medians |")
        lines.append("|---|---|---|---|---|---|---|")
        for (index, round) in result.rounds.enumerated() {
            guard let a = round.times[.plain], let diskA = round.disk[.plain], let diskB = round.disk[.versioned] else { continue }
            let perCopy = round.copyDisk.bytes / Int64(copies)  // the copies folder itself is a few KiB
            let extra = (diskB.bytes - diskA.bytes) / Int64(saves)
            lines.append(
                "| \(index + 1) | \(formatDuration(round.copy.median)) | \(formatDuration(round.copyFlush.median)) | \(formatBytes(perCopy)) "
                    + "| \(((round.copyDisk.regularFiles) / copies).formatted()) | **\(String(format: "%.0f×", Double(perCopy) / Double(extra)))** "
                    + "| **\(formatRatio(a.median + round.copy.median + round.copyFlush.median, a.median))** |")
        }
        return lines.joined(separator: "\n")
    }
}

extension Samples {
    init<S: Sequence<UInt64>>(_ values: S) {
        self.init()
        for value in values { append(value) }
    }
}

/// Bytes with three significant digits in binary units: `4.00 KiB`, `41.3 MiB`.
func formatBytes(_ bytes: Int64) -> String {
    let value = Double(bytes)
    let kib = 1024.0, mib = kib * 1024, gib = mib * 1024
    let (scaled, unit): (Double, String) =
        value.magnitude >= gib ? (value / gib, "GiB") : value.magnitude >= mib ? (value / mib, "MiB")
        : value.magnitude >= kib ? (value / kib, "KiB") : (value, "B")
    if unit == "B" { return "\(bytes) B" }
    let digits = scaled.magnitude >= 100 ? 0 : scaled.magnitude >= 10 ? 1 : 2
    return String(format: "%.\(digits)f %@", scaled, unit)
}
