#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Foundation

/// The library benchmark of issue #14: what a `notes` command costs as the library grows from 1
/// note to 100,000, and what `notes list --json` costs against the floor of reading every
/// manifest. Every figure is a median over rounds in which the variants take turns.
///
/// The notes run as child processes of the release `notes` next to docbench, on hard-linked
/// copies (`cp -al`) of the generated libraries (``LibraryFixture``), so the cached libraries
/// stay as generated. A save never writes a member in place (it builds a new tree and swaps it
/// in), so hard links are safe. `XDG_CACHE_HOME` points into the work folder: whatever per-machine
/// cache `notes` keeps (the index) lives and dies with the run.
struct LibraryBench {
    enum Command: String, CaseIterable {
        case show, edit, new

        var label: String {
            switch self {
            case .show: "`show TITLE`"
            case .edit: "`edit TITLE --append x`"
            case .new: "`new T-…`"
            }
        }
    }

    /// Times and peak memories of one command.
    struct Runs {
        var time = Samples()
        var memory = Samples()

        mutating func append(_ run: ChildRun) {
            time.append(run.elapsed)
            memory.append(run.peakMemory)
        }
    }

    struct ListResult {
        let size: Int
        /// The floor in this process (no process start).
        var floor = Samples()
        /// The same floor in a process of its own (`docbench --list-floor`).
        var processFloor = Samples()
        /// `notes list --json` with no index: an empty cache folder every run, and `$NOTES_INDEX=off`.
        var cold = Runs()
        /// `notes list --json` with the index on but none kept yet: an empty cache folder every run (the index built by a scan).
        var fresh = Runs()
        /// `notes list --json` with the index a previous run left (one untimed run first).
        var warm = Runs()
        var notesListed = 0
    }

    struct Result {
        var commands: [Int: [Command: Runs]] = [:]
        /// A Swift process that does nothing (`docbench --noop`): the start-up floor.
        var processStart = Runs()
        var list: ListResult?
        var notesBuild = "?"
        var roundsBySize: [Int: Int] = [:]
        /// Commands that failed, by library size: the exit status and the first line of the error.
        var failures: [Int: [Command: String]] = [:]
        /// The `DocumentIndex` measures' table (``LibraryIndexBench``), or why they didn't run.
        var index = ""
    }

    let sizes: [Int]
    let iterations: Int
    /// Rounds for libraries of 100,000 notes or more (each command there can take a minute).
    let largeIterations: Int
    /// The library size of the `list --json` measure (skipped if not among `sizes`).
    let listSize: Int
    let work: WorkDirectory
    let cacheFolder: String

    func run() throws -> Result {
        var result = Result()
        let scratch = work.path + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let cache = work.path + "/cache"
        let notes = ChildProcess(
            executable: try ChildProcess.sibling(named: "notes"), environment: ["XDG_CACHE_HOME": cache], scratch: scratch)
        let docbench = ChildProcess(executable: try ChildProcess.sibling(named: "docbench"), scratch: scratch)
        let git = ChildProcess(executable: "/usr/bin/git", scratch: scratch)
        if let described = try? git.run(["describe", "--always", "--dirty"], captureOutput: true) {
            result.notesBuild = described.output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let fixture = LibraryFixture(cacheFolder: cacheFolder, notes: notes, scratch: scratch)

        // Libraries: generated (or cached), then a hard-linked working copy each.
        var libraries: [Int: String] = [:]
        for size in sizes {
            let cached = try fixture.library(count: size)
            let copy = work.path + "/library-\(size)"
            progress("docbench library: copying \(size) notes (cp -al)")
            let cp = ChildProcess(executable: "/bin/cp", scratch: scratch)
            if (try? cp.run(["-al", cached, copy])) == nil {
                try? FileManager.default.removeItem(atPath: copy)
                try cp.run(["-a", cached, copy])
            }
            libraries[size] = copy
        }
        work.syncFileSystem()

        // One untimed `show` per library: whatever a first command pays once (an index built)
        // is not what this measures.
        for size in sizes {
            progress("docbench library: warm-up on \(size) notes")
            let run = try notes.spawn(["show", Self.target(in: size), "--library", libraries[size]!])
            if run.status != 0 { result.failures[size, default: [:]][.show] = Self.failure(run) }
        }

        var created = 0
        for round in 0..<iterations {
            let order = rotated(sizes, by: round)
            result.processStart.append(try docbench.run(["--noop"]))
            for size in order where size < 100_000 || round < largeIterations {
                let library = libraries[size]!
                // A command that failed at this size once (a library too large for it) is not run again.
                for command in rotated(Command.allCases, by: round) where result.failures[size]?[command] == nil {
                    let arguments: [String]
                    switch command {
                    case .show: arguments = ["show", Self.target(in: size)]
                    case .edit: arguments = ["edit", Self.target(in: size), "--append", "x"]
                    case .new:
                        created += 1
                        arguments = ["new", "T-\(UInt32.random(in: 0...UInt32.max))-\(created)"]
                    }
                    let run = try notes.spawn(arguments + ["--library", library])
                    work.syncFileSystem()
                    guard run.status == 0 else {
                        result.failures[size, default: [:]][command] = Self.failure(run)
                        progress("docbench library: \(size) notes: \(command.rawValue) failed: \(Self.failure(run))")
                        continue
                    }
                    result.commands[size, default: [:]][command, default: Runs()].append(run)
                }
                result.roundsBySize[size, default: 0] += 1
                let times = Command.allCases.map { command in
                    result.commands[size]?[command]?.time.values.last.map(formatDuration) ?? "failed"
                }
                progress("docbench library: round \(round + 1), \(size) notes: show \(times[0]), edit \(times[1]), new \(times[2])")
            }
        }

        if let library = libraries[listSize] {
            result.list = try measureList(library: library, size: listSize, notes: notes, docbench: docbench, cache: cache)
        }
        let large = sizes.max() ?? 1
        let live = libraries[listSize] != nil ? listSize : large
        let indexBench = LibraryIndexBench(iterations: iterations, work: work, docbench: docbench)
        result.index = indexBench.markdown(
            try indexBench.run(large: libraries[large]!, largeSize: large, live: libraries[live]!, liveSize: live))
        // `rm -rf` is many times faster than the work folder's own removal at 100,000 notes.
        for library in libraries.values { _ = try? ChildProcess(executable: "/bin/rm", scratch: scratch).spawn(["-rf", library]) }
        return result
    }

    /// `notes list --json` with and without an index, against the floor in-process and as a process.
    private func measureList(library: String, size: Int, notes: ChildProcess, docbench: ChildProcess, cache: String) throws -> ListResult {
        var list = ListResult(size: size)
        let floor = try LibraryFloor.readManifests(of: library)
        list.notesListed = floor.notes
        progress("docbench library: list --json on \(floor.notes) notes, \(iterations) rounds")
        try notes.run(["list", "--json", "--library", library])  // the index, if any, is current after this
        for round in 0..<iterations {
            for variant in rotated([0, 1, 2, 3, 4], by: round) {
                switch variant {
                case 0:
                    let start = now()
                    let read = try LibraryFloor.readManifests(of: library)
                    list.floor.append(now() - start)
                    guard read.notes == floor.notes else { throw BenchError(description: "the library changed during the list measure") }
                case 1:
                    list.processFloor.append(try docbench.run(["--list-floor", library]).elapsed)
                case 2:
                    let empty = "\(cache)-cold-\(round)"
                    let run = try notes.run(
                        ["list", "--json", "--library", library], extraEnvironment: ["XDG_CACHE_HOME": empty, "NOTES_INDEX": "off"])
                    list.cold.append(run)
                    try? FileManager.default.removeItem(atPath: empty)
                case 3:
                    let empty = "\(cache)-fresh-\(round)"
                    list.fresh.append(try notes.run(["list", "--json", "--library", library], extraEnvironment: ["XDG_CACHE_HOME": empty]))
                    try? FileManager.default.removeItem(atPath: empty)
                default:
                    let run = try notes.run(["list", "--json", "--library", library], captureOutput: round == 0)
                    if round == 0 {
                        let listed = (try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [Any])?.count
                        guard let listed, listed == floor.notes else {
                            throw BenchError(description: "`notes list --json` listed \(listed.map(String.init) ?? "nothing") of \(floor.notes) notes")
                        }
                    }
                    list.warm.append(run)
                }
            }
        }
        return list
    }

    /// `exit 74: notes: …`, the first line of a failed run's error.
    static func failure(_ run: ChildRun) -> String {
        let line = run.errors.split(separator: "\n").first.map(String.init) ?? ""
        return "exit \(run.status): \(line.count > 160 ? String(line.prefix(160)) + "…" : line)"
    }

    /// The title the commands name in a library of `size` notes: the middle note.
    static func target(in size: Int) -> String { LibraryFixture.title(size / 2) }

    private func rotated<T>(_ items: [T], by amount: Int) -> [T] {
        guard !items.isEmpty else { return items }
        let k = amount % items.count
        return Array(items[k...] + items[..<k])
    }

    // MARK: Report

    func markdown(_ result: Result) -> String {
        var lines = [
            "### Notes library: one command against the library's size",
            "",
            "Release `notes` (built from `\(result.notesBuild)`) run as a child process on a library of N generated format-3 notes "
                + "(`LibraryFixture` v\(LibraryFixture.generatorVersion)); each command names the middle note. Time from `posix_spawn` "
                + "to `wait4`, median of the rounds (rounds per size: "
                + sizes.map { "\(Self.count($0)): \(result.roundsBySize[$0] ?? 0)" }.joined(separator: ", ")
                + "); × is the ratio to the 1-note library (or the smallest size run) in the same run. Peak memory is the child's `ru_maxrss` (median).",
            "",
            "| notes | `show TITLE` | × | `edit TITLE --append x` | × | `new T-…` | × | peak memory show / edit / new |",
            "|---|---|---|---|---|---|---|---|",
        ]
        let base = sizes.min() ?? 1
        for size in sizes.sorted() {
            let runs = result.commands[size] ?? [:]
            var cells = ["\(Self.count(size))"]
            for command in Command.allCases {
                guard let median = runs[command]?.time.median else {
                    cells += ["fails", "–"]
                    continue
                }
                cells.append(formatDuration(median))
                cells.append(formatRatio(median, result.commands[base]?[command]?.time.median ?? 0))
            }
            cells.append(Command.allCases.map { formatMemory(runs[$0]?.memory.median ?? 0) }.joined(separator: " / "))
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        let failed = result.failures.sorted { $0.key < $1.key }.flatMap { size, commands in
            Command.allCases.compactMap { command in commands[command].map { "- \(Self.count(size)) notes, \(command.label): \($0)" } }
        }
        if !failed.isEmpty { lines += ["", "Failed (not run again at that size):"] + failed }
        lines.append("")
        lines.append(
            "Start-up floor: a Swift process that does nothing (`docbench --noop`), median \(formatDuration(result.processStart.time.median)), "
                + "peak memory \(formatMemory(result.processStart.memory.median)).")

        if let list = result.list {
            let floor = list.processFloor.median
            lines += [
                "",
                "### `notes list --json`, \(Self.count(list.size)) notes, against reading every manifest",
                "",
                "Floor: `opendir`/`readdir` of the library and `open`/`read`/`close` of each of the \(Self.count(list.notesListed)) "
                    + "`Info.json`, nothing parsed; in a process of its own (`docbench --list-floor`, the ratios' denominator, "
                    + "since `notes` is a process too) and in docbench's own process. Index off: a new empty `XDG_CACHE_HOME` every run "
                    + "and `NOTES_INDEX=off`. No index kept: a new empty `XDG_CACHE_HOME` every run, the index on (built by a scan). "
                    + "Current index: the cache folder the previous run left.",
                "",
                "| variant | median | p90 | × process floor | × in-process floor | peak memory |",
                "|---|---|---|---|---|---|",
                "| floor, in-process | \(formatDuration(list.floor.median)) | \(formatDuration(list.floor.p90)) | \(formatRatio(list.floor.median, floor)) | 1.00× | |",
                "| floor, process (`docbench --list-floor`) | \(formatDuration(floor)) | \(formatDuration(list.processFloor.p90)) | 1.00× | \(formatRatio(floor, list.floor.median)) | |",
                "| `notes list --json`, index off (`NOTES_INDEX=off`) | \(formatDuration(list.cold.time.median)) | \(formatDuration(list.cold.time.p90)) | \(formatRatio(list.cold.time.median, floor)) | \(formatRatio(list.cold.time.median, list.floor.median)) | \(formatMemory(list.cold.memory.median)) |",
                "| `notes list --json`, no index kept (built by a scan) | \(formatDuration(list.fresh.time.median)) | \(formatDuration(list.fresh.time.p90)) | \(formatRatio(list.fresh.time.median, floor)) | \(formatRatio(list.fresh.time.median, list.floor.median)) | \(formatMemory(list.fresh.memory.median)) |",
                "| `notes list --json`, current index | \(formatDuration(list.warm.time.median)) | \(formatDuration(list.warm.time.p90)) | \(formatRatio(list.warm.time.median, floor)) | \(formatRatio(list.warm.time.median, list.floor.median)) | \(formatMemory(list.warm.memory.median)) |",
            ]
        }

        lines += ["", "| measure | value | goal | |", "|---|---|---|---|"]
        for largest in sizes.sorted() where largest > base {
            for command in Command.allCases {
                guard let big = result.commands[largest]?[command]?.time.median, let small = result.commands[base]?[command]?.time.median else {
                    lines.append("| \(command.label), \(Self.count(largest)) vs \(Self.count(base)) notes | fails | ≤ 1.2× | not met |")
                    continue
                }
                let r = ratio(big, small)
                lines.append("| \(command.label), \(Self.count(largest)) vs \(Self.count(base)) notes | \(String(format: "%.2f×", r)) | ≤ 1.2× | \(r <= 1.2 ? "met" : "not met") |")
            }
        }
        if let list = result.list {
            let cold = ratio(list.cold.time.median, list.processFloor.median)
            let warm = ratio(list.warm.time.median, list.processFloor.median)
            lines.append("| `list --json` \(Self.count(list.size)), index off (`NOTES_INDEX=off`) vs floor | \(String(format: "%.2f×", cold)) | ≤ 2× | \(cold <= 2 ? "met" : "not met") |")
            let fresh = ratio(list.fresh.time.median, list.processFloor.median)
            lines.append("| `list --json` \(Self.count(list.size)), no index kept (built by a scan) vs floor | \(String(format: "%.2f×", fresh)) | ≤ 2× | \(fresh <= 2 ? "met" : "not met") |")
            lines.append("| `list --json` \(Self.count(list.size)), current index vs floor | \(String(format: "%.2f×", warm)) | ≤ 0.25× | \(warm <= 0.25 ? "met" : "not met") |")
        }
        lines += ["", result.index]
        return lines.joined(separator: "\n")
    }

    /// `100,000`.
    static func count(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, character) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}

/// Bytes as `35.2 MiB`.
func formatMemory(_ bytes: UInt64) -> String {
    bytes == 0 ? "–" : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

extension LibraryBench: Benchmark {}
