// docbench: how fast DocumentKit saves, against a full copy and against the floor of the
// system calls a save cannot avoid. See Benchmarks/README.md.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

let usage = """
    usage: docbench <save | file | coordinate | notify | roundtrip | presenters | versions | library | large-package | archive | single-file | serve | serve-versions | all> [options]

      save   package of N files, one changed per save: DocumentKit vs full copy vs floor
      file   one file replaced: DocumentKit (durable, consistent) vs Foundation .atomic vs floor
      coordinate  uncontended coordinated read and write vs a raw OFD lock pair
      notify      presenter change notice after an uncoordinated write vs raw inotify
      roundtrip   coordinated read asking a presenter in another process vs a socket round trip
      presenters  memory and time of 10,000 presenters in one process
      versions    disk and time of 100 saves of the package with every version kept vs none
      library     notes commands on libraries of 1 to 100,000 notes, and list --json vs reading
                  every manifest (not part of `all`: minutes to hours; see Benchmarks/README.md)
      large-package  a note of 100, 1,000, 10,000 attachments opened in a new process with the
                  member digest cache warm vs fstat of every member; a body edit vs the raw
                  save floor; a 200 MB member opened with the cache cold and warm
      archive     export and import of a 1,000-file, ~100 MB note (tar.gz, zip) against bsdtar: time,
                  MB/s, peak memory; then notes of 1, 1,000, 10,000 small members (not part of `all`)
      single-file a document stored as one zip file of 1, 1,000, 10,000 members of 16 KiB: a save with
                  one member changed against a full rewrite of the archive (not part of `all`)
      serve       `notes serve` under wrk on loopback, libraries of 1 and 1,000 notes (--sizes): GET of a note
                  vs a static file of the same size from the same server; PUT with If-Match (durable
                  saves) vs the durable-save floor; -i sets the seconds per wrk run (default 10; not part of `all`)
      serve-versions  one note PUT by one connection while its versions grow (--steps, default 6,
                  of -i seconds, default 2): p50 and server CPU per PUT by number of versions (not part of `all`)
      all    all of them

    options:
      -i, --iterations K      timed rounds (default: 11 for save, 200 for file, 100 saves per
                              round for versions; `all` uses it for save, see --file-iterations)
      --file-iterations K     timed rounds of `file` under `all` (default 200)
      --copy-iterations K     timed full-copy saves (default 3; they take seconds each); for
                              `versions`, full copies of the package per round
      --rounds R              rounds of `versions` (default 2), each with fresh packages
      --steps K               steps of `serve-versions` (default 6)
      -n, --count N           files in the package (default 10000)
      -s, --size BYTES        size of each file (default 4096)
      -w, --work-dir DIR      where to create the work folder (default /tmp)
      --variants LIST         save variants to run, of dk,copy,floor (default all three)
      --shuffled-floor        (diagnostic) raw saves link and remove in random order
                              instead of inode order
      --keep                  keep the work folder
      --sizes LIST            library sizes for `library` (default 1,1000,10000,100000) and `serve` (default 1,1000)
      --flush MODE            `serve`: the server's `--flush` (each, the default, or file-system)
      --large-iterations K    rounds of `library` at 100,000 notes or more (default 3)
      --library-cache DIR     where `library` keeps generated libraries (default .build-bench/libraries)
      -h, --help              this text
    """

struct Options {
    var command = ""
    var iterations: Int?
    var fileIterations: Int?
    var copyIterations = 3
    var rounds = 2
    var steps = 6
    var count = 10_000
    var size = 4096
    var workDirectory: String?
    var variants = PackageBench.Variant.allCases
    var keep = false
    var shuffledFloor = false
    var sizes = [1, 1_000, 10_000, 100_000]
    var sizesGiven = false
    var flush = "each"
    var largeIterations = 3
    var libraryCache = ".build-bench/libraries"
}

func fail(_ message: String, status: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("docbench: \(message)\n".utf8))
    exit(status)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ flag: String) -> String {
        guard let v = rest.popFirst() else { fail("\(flag) needs a value\n\n\(usage)") }
        return v
    }
    func number(_ flag: String, minimum: Int) -> Int {
        let text = value(flag)
        guard let n = Int(text.replacingOccurrences(of: "_", with: "").replacingOccurrences(of: ",", with: "")), n >= minimum else {
            fail("\(flag): “\(text)” is not a number ≥ \(minimum)")
        }
        return n
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "save" where options.command.isEmpty, "file" where options.command.isEmpty, "all" where options.command.isEmpty,
            "coordinate" where options.command.isEmpty, "notify" where options.command.isEmpty,
            "roundtrip" where options.command.isEmpty, "presenters" where options.command.isEmpty,
            "versions" where options.command.isEmpty, "library" where options.command.isEmpty,
            "large-package" where options.command.isEmpty, "archive" where options.command.isEmpty,
            "single-file" where options.command.isEmpty, "serve" where options.command.isEmpty,
            "serve-versions" where options.command.isEmpty:
            options.command = argument
        case "-i", "--iterations": options.iterations = number(argument, minimum: 1)
        case "--file-iterations": options.fileIterations = number(argument, minimum: 1)
        case "--copy-iterations": options.copyIterations = number(argument, minimum: 1)
        case "--rounds": options.rounds = number(argument, minimum: 1)
        case "--steps": options.steps = number(argument, minimum: 1)
        case "-n", "--count": options.count = number(argument, minimum: 2)
        case "-s", "--size": options.size = number(argument, minimum: 1)
        case "-w", "--work-dir": options.workDirectory = value(argument)
        case "--keep": options.keep = true
        case "--sizes":
            options.sizesGiven = true
            options.sizes = value(argument).split(separator: ",").map { text in
                guard let n = Int(text.replacingOccurrences(of: "_", with: "")), (1...999_999).contains(n) else {
                    fail("--sizes: “\(text)” is not a library size from 1 to 999,999")
                }
                return n
            }
        case "--flush":
            options.flush = value(argument)
            guard ["each", "file-system"].contains(options.flush) else { fail("--flush: each or file-system") }
        case "--large-iterations": options.largeIterations = number(argument, minimum: 1)
        case "--library-cache": options.libraryCache = value(argument)
        case "--shuffled-floor": options.shuffledFloor = true
        case "--variants":
            options.variants = value(argument).split(separator: ",").map { name in
                guard let variant = PackageBench.Variant(rawValue: String(name)) else {
                    fail("unknown variant “\(name)”; use dk, copy, floor")
                }
                return variant
            }
        case "-h", "--help", "help":
            print(usage)
            exit(0)
        default: fail("unexpected argument “\(argument)”\n\n\(usage)")
        }
    }
    if options.command.isEmpty { fail("which benchmark?\n\n\(usage)") }
    return options
}

// Helper processes of the library benchmark (floors) and of the round-trip benchmark.
LibraryFloor.helperMain(CommandLine.arguments)
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "--echo-server" {
    RoundTripBench.echoServer(CommandLine.arguments[2])
}
if CommandLine.arguments.count >= 4, CommandLine.arguments[1] == "--presenter" {
    RoundTripBench.presenterProcess(namespace: CommandLine.arguments[2], file: CommandLine.arguments[3])
}

if CommandLine.arguments.count >= 5, CommandLine.arguments[1] == "--large-save" {
    LargePackageBench.saveChild(CommandLine.arguments[2], cache: CommandLine.arguments[3], rounds: Int(CommandLine.arguments[4]) ?? 1)
}
if CommandLine.arguments.count >= 4, CommandLine.arguments[1] == "--large-open" {
    LargePackageBench.openChild(CommandLine.arguments[2], cache: CommandLine.arguments[3])
}

if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "--archive-child" {
    ArchiveBench.childMain(Array(CommandLine.arguments.dropFirst(2)))
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
let work: WorkDirectory
do { work = try WorkDirectory(base: options.workDirectory, keep: options.keep) } catch { fail("\(error)", status: 73) }
let facts = MachineFacts(workPath: work.path)
let started = now()
var report: [String] = []
report.append("## docbench \(CommandLine.arguments.dropFirst().joined(separator: " "))")
report.append("")
report.append(facts.markdown(workPath: work.path, topDir: work.hasTopDirFlag))
/// Runs one benchmark and adds its table to the report.
@MainActor func measure<B: Benchmark>(_ bench: B) throws {
    let result = try bench.run()
    report.append("")
    report.append(bench.markdown(result))
}

/// Whether `name` was asked for, alone or through `all`.
@MainActor func wants(_ name: String) -> Bool { options.command == name || options.command == "all" }

do {
    if wants("save") {
        try measure(PackageBench(
            count: options.count, size: options.size, iterations: options.iterations ?? 11,
            copyIterations: options.copyIterations, variants: options.variants, work: work, shuffledFloor: options.shuffledFloor))
    }
    if wants("file") {
        let iterations = options.command == "file" ? options.iterations ?? 200 : options.fileIterations ?? 200
        try measure(FileBench(size: options.size, iterations: iterations, work: work))
    }
    if wants("presenters") {
        try measure(PresenterMemoryBench(count: options.command == "presenters" ? options.count : 10_000, work: work))
    }
    if wants("roundtrip") {
        try measure(RoundTripBench(rounds: options.command == "roundtrip" ? options.iterations ?? 11 : 11, work: work))
    }
    if wants("notify") {
        try measure(NotificationBench(rounds: options.command == "notify" ? options.iterations ?? 200 : 200, work: work))
    }
    if wants("coordinate") {
        try measure(CoordinationBench(rounds: options.command == "coordinate" ? options.iterations ?? 21 : 21, work: work))
    }
    if options.command == "large-package" {
        try measure(LargePackageBench(sizes: [100, 1_000, 10_000], rounds: options.iterations ?? 5, largeBytes: 200 << 20, work: work))
    }
    if options.command == "archive" {
        try measure(ArchiveBench(rounds: options.iterations ?? 5, sizes: [1, 1_000, 10_000], work: work))
    }
    if options.command == "serve" {
        try measure(ServeBench(sizes: options.sizesGiven ? options.sizes : [1, 1_000], seconds: options.iterations ?? 10, flush: options.flush, work: work))
    }
    if options.command == "serve-versions" {
        try measure(ServeVersionsBench(steps: options.steps, seconds: options.iterations ?? 2, work: work))
    }
    if options.command == "single-file" {
        try measure(SingleFileBench(sizes: [1, 1_000, 10_000], memberSize: 16 << 10, rounds: options.iterations ?? 5, work: work))
    }
    if wants("versions") {
        try measure(VersionsBench(
            count: options.count, size: options.size, saves: options.command == "versions" ? options.iterations ?? 100 : 100,
            rounds: options.rounds, copies: options.copyIterations, work: work, keep: options.keep))
    }
    if options.command == "library" {
        try measure(LibraryBench(
            sizes: options.sizes, iterations: options.iterations ?? 5, largeIterations: options.largeIterations,
            listSize: 10_000, work: work, cacheFolder: options.libraryCache))
    }
} catch {
    work.remove()
    fail("\(error)", status: 70)
}
work.remove()
report.append("")
report.append("Total run time: \(formatDuration(now() - started)).")
print(report.joined(separator: "\n"))
