#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation

/// The package benchmark: N files of `size` bytes, one of them changed per save.
///
/// Each variant saves its own package, built fresh (untimed) in its own sub-folder of the
/// TOPDIR work folder. After one untimed warm-up save each, the variants take turns, with the
/// order rotated every round, and the file system is synced (untimed) after every save so that
/// each one starts with nothing dirty.
final class PackageBench {
    enum Variant: String, CaseIterable {
        case documentKit = "dk"
        case fullCopy = "copy"
        case floor = "floor"

        var title: String {
            switch self {
            case .documentKit: "(a) DocumentKit `FileWrapper.write(to:)`, durable"
            case .fullCopy: "(b) full copy: copy + fsync every member, exchange, remove old"
            case .floor: "(c) floor: link() × (N−1) + write/fsync 1, exchange, remove old"
            }
        }
    }

    /// Where each raw save spent its time.
    struct Phases {
        var build: UInt64 = 0  // mkdir + link (or copy, without the fsyncs) of the unchanged members
        var changed: UInt64 = 0  // create + write of the changed member
        var flushes: UInt64 = 0  // every fsync: members, the new folder
        var swap: UInt64 = 0  // renameat2(RENAME_EXCHANGE) + fsync(parent)
        var remove: UInt64 = 0  // N unlink + rmdir of the old tree
    }

    let count: Int
    let size: Int
    let iterations: Int
    /// Timed rounds that include the full copy (the first ones; it takes seconds per save).
    let copyIterations: Int
    let shuffledFloor: Bool
    let variants: [Variant]
    let work: WorkDirectory

    private let names: NameTable
    private let buffer: UnsafeMutableRawPointer
    private let copyBuffer: UnsafeMutableRawPointer
    /// The order in which the raw saves link (and then remove) members: the manifest's, which is
    /// also inode order, or, with `--shuffled-floor`, a random one (to show what order costs).
    private let linkOrder: [Int]

    init(
        count: Int, size: Int, iterations: Int, copyIterations: Int, variants: [Variant], work: WorkDirectory,
        shuffledFloor: Bool = false
    ) {
        self.count = count
        self.size = size
        self.iterations = iterations
        self.copyIterations = Swift.min(copyIterations, iterations)
        self.shuffledFloor = shuffledFloor
        self.variants = variants
        self.work = work
        names = NameTable(count: count)
        buffer = .allocate(byteCount: Swift.max(size, 1), alignment: 64)
        buffer.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "p"), count: Swift.max(size, 1))
        copyBuffer = .allocate(byteCount: Swift.max(size, 1), alignment: 64)
        var generator = SystemRandomNumberGenerator()
        linkOrder = shuffledFloor ? Array(0..<count).shuffled(using: &generator) : Array(0..<count)
    }

    deinit {
        buffer.deallocate()
        copyBuffer.deallocate()
    }

    struct Result {
        var totals: [Variant: Samples] = [:]
        /// CPU time spent in user space and in the kernel during each save.
        var userCPU: [Variant: Samples] = [:]
        var systemCPU: [Variant: Samples] = [:]
        var phases: [Variant: [Phases]] = [:]
    }

    // MARK: Running

    func run() throws -> Result {
        var result = Result()
        var folders: [Variant: (path: String, fd: CInt)] = [:]
        var trees: [Variant: FileWrapper] = [:]
        defer { for (_, folder) in folders { close(folder.fd) } }
        for variant in variants {
            let folder = try work.makeSubdirectory(variant.rawValue)
            folders[variant] = folder
            progress("docbench save: building \(variant.rawValue)/pkg (\(count) × \(size) B)")
            try buildPackage(in: folder.fd, path: folder.path)
        }
        work.syncFileSystem()
        if let folder = folders[.documentKit] {
            // Read once, untimed: the app's in-memory document.
            trees[.documentKit] = try FileWrapper(contentsOf: URL(fileURLWithPath: folder.path + "/pkg"))
        }

        // Round 0 is the warm-up; rounds 1... are timed.
        for round in 0...iterations {
            let changed = (round * 7919 + 13) % count
            let order = (0..<variants.count).map { variants[($0 + round) % variants.count] }
            for variant in order {
                // The full copy takes seconds: no warm-up, and only in the first rounds.
                if variant == .fullCopy && (round == 0 || round > copyIterations) { continue }
                let folder = folders[variant]!
                let total: UInt64
                var phases = Phases()
                let cpuBefore = cpuTimes()
                switch variant {
                case .documentKit:
                    var tree = trees[.documentKit]!
                    tree[NameTable.name(changed)] = FileWrapper(regularFileWithContents: contents(round: round))
                    let url = URL(fileURLWithPath: folder.path + "/pkg")
                    let start = now()
                    let saved = try tree.write(to: url)
                    total = now() - start
                    trees[.documentKit] = saved
                case .fullCopy, .floor:
                    fill(round: round)
                    let start = now()
                    phases = try rawSave(in: folder.fd, changed: changed, copy: variant == .fullCopy)
                    total = now() - start
                }
                let cpuAfter = cpuTimes()
                work.syncFileSystem()
                if round > 0 {
                    result.totals[variant, default: Samples()].append(total)
                    result.userCPU[variant, default: Samples()].append(cpuAfter.user - cpuBefore.user)
                    result.systemCPU[variant, default: Samples()].append(cpuAfter.system - cpuBefore.system)
                    if variant != .documentKit { result.phases[variant, default: []].append(phases) }
                }
                progress("docbench save: round \(round)\(round == 0 ? " (warm-up)" : "") \(variant.rawValue): \(formatDuration(total))")
            }
        }
        // Every variant must have produced the same package: N members, the last change in place.
        for variant in variants {
            try verify(folders[variant]!.path, lastRound: variant == .fullCopy ? copyIterations : iterations)
        }
        return result
    }

    /// Untimed: `pkg` with N files of `size` bytes, each starting with its index.
    private func buildPackage(in parent: CInt, path: String) throws(BenchError) {
        try buildBenchPackage(in: parent, path: path, count: count, size: size, names: names)
    }

    /// The changed member's new contents in round `round` (its first 64 bytes mark the round).
    private func fill(round: Int) {
        let marker = UInt8(ascii: "A") + UInt8(round % 26)
        buffer.initializeMemory(as: UInt8.self, repeating: marker, count: Swift.min(size, 64))
    }

    private func contents(round: Int) -> Data {
        fill(round: round)
        return Data(bytes: buffer, count: size)
    }

    /// (b) and (c): the raw save of `pkgsave.c`, with names from the in-memory manifest.
    private func rawSave(in parent: CInt, changed: Int, copy: Bool) throws(BenchError) -> Phases {
        var phases = Phases()
        var flushes: UInt64 = 0
        let t0 = now()
        try check(mkdirat(parent, "pkg.new", 0o755), "mkdir pkg.new")
        let newTree = try check(openat(parent, "pkg.new", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open pkg.new")
        let oldTree = try check(openat(parent, "pkg", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open pkg")
        for i in linkOrder where i != changed {
            if copy {
                let source = try check(openat(oldTree, names[i], O_RDONLY | O_CLOEXEC), "open member \(i)")
                let target = try check(
                    openat(newTree, names[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644), "create copy of member \(i)")
                try copyContents(from: source, to: target)
                close(source)
                let t = now()
                try check(fsync(target), "fsync copy of member \(i)")
                flushes += now() - t
                close(target)
            } else {
                try check(linkat(oldTree, names[i], newTree, names[i], 0), "link member \(i)")
            }
        }
        let t1 = now()
        let fd = try check(openat(newTree, names[changed], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644), "create changed member")
        try writeAll(fd, buffer, size, "write changed member")
        let t2 = now()
        try check(fsync(fd), "fsync changed member")
        close(fd)
        try check(fsync(newTree), "fsync pkg.new")
        let t3 = now()
        flushes += t3 - t2
        close(newTree)
        close(oldTree)
        try check(dk_renameat2(parent, "pkg.new", parent, "pkg", DK_RENAME_EXCHANGE), "renameat2 RENAME_EXCHANGE")
        try check(fsync(parent), "fsync parent")
        let t4 = now()
        // The old tree, now at pkg.new: every known name, then the folder.
        let old = try check(openat(parent, "pkg.new", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open old tree")
        for i in linkOrder where unlinkat(old, names[i], 0) < 0 && dk_errno() != ENOENT {
            try check(-1, "unlink old member \(i)")
        }
        close(old)
        try check(unlinkat(parent, "pkg.new", AT_REMOVEDIR), "rmdir old tree")
        let t5 = now()
        phases.build = t1 - t0 - (copy ? flushes : 0)
        phases.changed = t2 - t1
        phases.flushes = flushes
        phases.swap = t4 - t3
        phases.remove = t5 - t4
        return phases
    }

    /// read + write through a buffer of its own.
    private func copyContents(from source: CInt, to target: CInt) throws(BenchError) {
        var copied = 0
        while copied < size {
            let got = read(source, copyBuffer, size - copied)
            if got < 0 {
                if dk_errno() == EINTR { continue }
                try check(-1, "read member")
            }
            if got == 0 { break }
            try writeAll(target, copyBuffer, got, "write copy")
            copied += got
        }
    }

    /// Checks a saved package: N members; the member changed in the last round has its contents.
    private func verify(_ folder: String, lastRound: Int) throws(BenchError) {
        let path = folder + "/pkg"
        let members = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard members.count == count else {
            throw BenchError(description: "\(path) has \(members.count) members, expected \(count)")
        }
        let changed = NameTable.name((lastRound * 7919 + 13) % count)
        let expected = contents(round: lastRound)
        guard let actual = FileManager.default.contents(atPath: path + "/" + changed), actual == expected else {
            throw BenchError(description: "\(path)/\(changed) does not hold the last save's contents")
        }
        let litter = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0 != "pkg" }
        guard litter.isEmpty else { throw BenchError(description: "\(folder) holds leftovers: \(litter)") }
    }
}

// MARK: - Report

extension PackageBench {
    func markdown(_ result: Result) -> String {
        var lines: [String] = []
        lines.append("### Package save: \(count.formatted()) files × \(size.formatted()) B, one file changed per save")
        lines.append("")
        lines.append(
            "\(iterations) timed saves per variant after 1 warm-up (the full copy: \(copyIterations), no warm-up), "
                + "taking turns in rotated order; the file system is synced (untimed) after every save.")
        if shuffledFloor { lines.append("The floor links and removes in **random** order (`--shuffled-floor`).") }
        lines.append("")
        lines.append("| variant | min | median | p90 | max | CPU user / kernel (medians) |")
        lines.append("|---|---|---|---|---|---|")
        for variant in variants {
            guard let s = result.totals[variant] else { continue }
            let user = result.userCPU[variant].map { formatDuration($0.median) } ?? "?"
            let system = result.systemCPU[variant].map { formatDuration($0.median) } ?? "?"
            lines.append("| \(variant.title) | \(formatDuration(s.min)) | **\(formatDuration(s.median))** | \(formatDuration(s.p90)) | \(formatDuration(s.max)) | \(user) / \(system) |")
        }
        lines.append("")
        let a = result.totals[.documentKit]
        let b = result.totals[.fullCopy]
        let c = result.totals[.floor]
        lines.append("| ratio (medians) | value | goal | |")
        lines.append("|---|---|---|---|")
        if let a, let c {
            let r = ratio(a.median, c.median)
            lines.append("| a / c: DocumentKit vs floor | \(formatRatio(a.median, c.median)) (p90: \(formatRatio(a.p90, c.p90))) | ≤ 1.5× | \(r <= 1.5 ? "met" : "**not met**") |")
        }
        if let a, let b {
            let r = ratio(b.median, a.median)
            lines.append("| b / a: full copy vs DocumentKit | \(formatRatio(b.median, a.median)) (p90: \(formatRatio(b.p90, a.p90))) | ≥ 15× | \(r >= 15 ? "met" : "**not met**") |")
        }
        let raw = variants.filter { $0 != .documentKit }
        if !raw.isEmpty {
            lines.append("")
            lines.append("Phases of the raw saves (medians of each phase):")
            lines.append("")
            lines.append("| variant | mkdir + link/copy N−1 | write changed | all fsyncs (members, new dir) | exchange + fsync(parent) | remove old tree |")
            lines.append("|---|---|---|---|---|---|")
            for variant in raw {
                guard let phases = result.phases[variant], !phases.isEmpty else { continue }
                func median(_ key: KeyPath<Phases, UInt64>) -> String {
                    var s = Samples()
                    for p in phases { s.append(p[keyPath: key]) }
                    return formatDuration(s.median)
                }
                lines.append("| \(variant.title.prefix(3)) \(variant.rawValue) | \(median(\.build)) | \(median(\.changed)) | \(median(\.flushes)) | \(median(\.swap)) | \(median(\.remove)) |")
            }
        }
        return lines.joined(separator: "\n")
    }
}
