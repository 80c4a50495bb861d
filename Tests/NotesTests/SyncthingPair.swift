#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing

/// Two real Syncthing instances on loopback sharing one folder, through the harness
/// `shared/tools/syncthing-pair.sh` (see `shared/research/syncthing-pair.md`): `a` and `b` are the
/// two synced folders, each the working copy of one "machine".
///
/// Every call runs the script to completion with `posix_spawn` and `waitpid`, its standard output
/// and error going to files under `logs`, and no descriptor of this process but those three
/// inherited. (`up` leaves two daemons behind, started with `setsid`: a child that inherited a pipe
/// or Foundation `Process`'s exit-detection socket would keep it open long after the script
/// exited, and a reader waiting for end of file, or `Process.waitUntilExit`, would hang.)
///
/// Always `stop()` a started pair (`defer { pair.stop() }`): the daemons outlive the test process.
final class SyncthingPair {
    enum Side: String, CaseIterable, CustomStringConvertible {
        case a, b
        var description: String { rawValue }
    }

    /// What `pause`/`resume` act on: the peer device (the connection drops) or the shared folder.
    enum Target: String {
        case device, folder
    }

    /// A failure of the harness or a missing prerequisite; the description says what to do.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `DOCUMENTKIT_SKIP_SYNCTHING=1` skips the tests against a real pair (nothing else does).
    static let optOutVariable = "DOCUMENTKIT_SKIP_SYNCTHING"
    static var isOptedOut: Bool { ProcessInfo.processInfo.environment[optOutVariable] == "1" }

    /// Not the harness's defaults (22001/22002, 8385/8386): another helper uses other ports.
    static let ports = ["ST_PORT_A": "22201", "ST_PORT_B": "22202", "ST_GUI_A": "8585", "ST_GUI_B": "8586"]

    /// The repository's root: the parent of `Tests/`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/tools/syncthing-pair.sh` from the repository's root (in CI, `shared/` is
    /// checked out beside the clone).
    static let script = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/tools/syncthing-pair.sh").standardizedFileURL

    /// The folder given to the script (`DIR`): `a/`, `b/`, `home-a/`, `home-b/`.
    let directory: URL
    /// Standard output and error of every script run, one pair of files per run.
    let logs: URL
    /// The `KEY=VALUE` lines `up` printed (`A_DIR`, `A_DEVICE_ID`, `A_PID`…, `FOLDER_ID`).
    private(set) var values: [String: String] = [:]
    /// Each script run: what, how long, how it ended.
    private(set) var journal: [String] = []
    private var runs = 0
    private var stopped = false

    /// Side a's synced folder.
    var aDir: URL { dir(.a) }
    /// Side b's synced folder.
    var bDir: URL { dir(.b) }

    /// The synced folder of `side`.
    func dir(_ side: Side) -> URL {
        URL(fileURLWithPath: values["\(side.rawValue.uppercased())_DIR"] ?? directory.appendingPathComponent(side.rawValue).path)
    }

    /// Syncthing's home (configuration, database, `syncthing.log`) of `side`.
    func home(_ side: Side) -> URL {
        URL(fileURLWithPath: values["\(side.rawValue.uppercased())_HOME"] ?? directory.appendingPathComponent("home-\(side)").path)
    }

    /// The 7-character short id of `side`'s device: what Syncthing puts in conflict copies' names.
    func shortDeviceID(_ side: Side) -> String {
        String((values["\(side.rawValue.uppercased())_DEVICE_ID"] ?? "").prefix(7))
    }

    private init(directory: URL, logs: URL) {
        self.directory = directory
        self.logs = logs
    }

    deinit {
        if !stopped { stop() }
    }

    // MARK: Starting and stopping

    /// Checks what the harness needs, then runs `up` in `parent/pair` (the harness's output goes to
    /// `parent/harness-logs`): both instances started, connected and in sync.
    static func start(in parent: URL) throws -> SyncthingPair {
        try checkPrerequisites()
        let directory = parent.appendingPathComponent("pair", isDirectory: true)
        let logs = parent.appendingPathComponent("harness-logs", isDirectory: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let pair = SyncthingPair(directory: directory, logs: logs)
        let up = try pair.run(["up", directory.path], label: "up")
        guard up.status == 0 else {
            // `up` stops what it started when it fails; `down` is for anything it could not.
            pair.stop()
            let leftover =
                up.stderr.contains("already in use")
                ? "\n(A pair left running by a test process that crashed? `pgrep -af 'syncthing serve'` shows its "
                    + "--home=DIR/home-a; stop it with `\(script.path) down DIR`.)" : ""
            throw Failure(
                description: "syncthing-pair.sh up failed (\(up.statusDescription)):\n\(up.stderr)\(leftover)"
                    + "\n\(pair.logTails())")
        }
        for line in up.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            pair.values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard pair.values["A_DIR"] != nil, pair.values["B_DIR"] != nil else {
            pair.stop()
            throw Failure(description: "syncthing-pair.sh up printed no A_DIR/B_DIR lines; stdout:\n\(up.stdout)")
        }
        return pair
    }

    /// Stops both instances (`down`: TERM, KILL after 15 s). Does not throw: a failure is recorded
    /// as an issue. Calling it again does nothing.
    func stop() {
        guard !stopped else { return }
        stopped = true
        do {
            let down = try run(["down", directory.path], label: "down")
            if down.status != 0 {
                Issue.record("syncthing-pair.sh down failed (\(down.statusDescription)):\n\(down.stderr)")
            }
        } catch {
            Issue.record("syncthing-pair.sh down could not run: \(error)")
        }
    }

    /// Throws, saying what to install, unless the harness and what it runs are all here.
    static func checkPrerequisites() throws {
        let skip = "(or set \(optOutVariable)=1 to skip the tests against a real Syncthing pair)"
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw Failure(
                description: "the Syncthing pair harness is missing: expected \(script.path), i.e. "
                    + "`shared/tools/syncthing-pair.sh` in the `shared` checkout beside the repository \(skip)")
        }
        let syncthing = ProcessInfo.processInfo.environment["ST_BIN"] ?? "syncthing"
        guard findExecutable(syncthing) != nil else {
            throw Failure(
                description: "syncthing is not installed (`\(syncthing)` \(syncthing.contains("/") ? "is not an executable" : "is not on PATH")): install it with "
                    + "`Scripts/bootstrap.sh test` (or `apt-get install syncthing`) \(skip)")
        }
        for (tool, package) in [("bash", "bash"), ("curl", "curl"), ("python3", "python3"), ("setsid", "util-linux")]
        where findExecutable(tool) == nil {
            throw Failure(
                description: "the Syncthing pair harness needs `\(tool)`, which is not on PATH: install it "
                    + "(`apt-get install \(package)`) \(skip)")
        }
    }

    /// `name` if it is an executable path, else the first executable `name` on PATH.
    static func findExecutable(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    // MARK: Commands

    /// Side `side` pauses its peer device (the connection drops; waits for it) or the folder.
    func pause(_ side: Side, _ target: Target = .device) throws {
        try check(["pause", directory.path, side.rawValue, target.rawValue], label: "pause-\(side)-\(target)")
    }

    /// Undoes `pause`; waits until connected again, not until in sync (call `waitSync()`).
    func resume(_ side: Side, _ target: Target = .device) throws {
        try check(["resume", directory.path, side.rawValue, target.rawValue], label: "resume-\(side)-\(target)")
    }

    /// Rescans both sides (or `side`) now and returns when the scan is done.
    func scan(_ side: Side? = nil) throws {
        try check(["scan", directory.path] + (side.map { [$0.rawValue] } ?? []), label: "scan")
    }

    /// Rescans both sides, then waits until both are connected, idle and in sync.
    func waitSync() throws {
        try check(["wait-sync", directory.path], label: "wait-sync")
    }

    /// The harness's `status` lines (PIDs, connection, folder state), or why there are none.
    func status() -> String {
        guard let result = try? run(["status", directory.path], label: "status") else { return "(status did not run)" }
        return result.stdout + (result.status == 0 ? "" : "(status: \(result.statusDescription)) \(result.stderr)")
    }

    /// The last `lines` lines of each side's `syncthing.log`.
    func logTails(lines: Int = 25) -> String {
        Side.allCases.map { side in
            let log = home(side).appendingPathComponent("syncthing.log")
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? "(no \(log.path))"
            let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
            return "--- \(log.path), last \(lines) lines:\n\(tail)"
        }.joined(separator: "\n")
    }

    /// Every file and folder under `root` (hidden ones included), relative, sorted; files with
    /// their sizes. Empty when `root` is missing.
    static func tree(_ root: URL) -> [String] {
        let base = root.resolvingSymlinksInPath().path
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var lines: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let attributes = enumerator.fileAttributes ?? [:]
            if attributes[.type] as? FileAttributeType == .typeDirectory {
                lines.append(relative + "/")
            } else {
                lines.append("\(relative)  (\((attributes[.size] as? NSNumber)?.intValue ?? -1) bytes)")
            }
        }
        return lines.sorted()
    }

    /// Both synced folders' trees, for failure messages.
    func trees() -> String {
        Side.allCases.map { side in
            "--- \(side): \(dir(side).path)\n" + Self.tree(dir(side)).map { "  " + $0 }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    // MARK: Running the script

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var seconds: Double

        /// "exit N" or "signal N".
        var statusDescription: String {
            (status & 0x7f) == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
        }
    }

    /// Runs the script and throws when it fails, with its standard error (it says what it last saw).
    private func check(_ arguments: [String], label: String) throws {
        let result = try run(arguments, label: label)
        guard result.status == 0 else {
            throw Failure(
                description: "syncthing-pair.sh \(arguments.joined(separator: " ")) failed "
                    + "(\(result.statusDescription), after \(String(format: "%.1f", result.seconds)) s):\n\(result.stderr)")
        }
    }

    #if canImport(Glibc)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// Makes the child close every descriptor from 3 on: `posix_spawn_file_actions_addclosefrom_np`
    /// (glibc 2.34+; the Glibc overlay does not declare it, so it is looked up), else a close
    /// action for each descriptor open now.
    private static func closeFromThree(_ actions: inout posix_spawn_file_actions_t) {
        if let handle = dlopen(nil, RTLD_NOW) {
            defer { dlclose(handle) }
            if let symbol = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np"),
                unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3) == 0
            {
                return
            }
        }
        // (glibc ignores a close action whose descriptor is no longer open by then.)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
    #endif

    /// Runs `bash syncthing-pair.sh ARGUMENTS` with the pair's ports in the environment, standard
    /// input from /dev/null and standard output and error into files, and waits for it.
    private func run(_ arguments: [String], label: String) throws -> Result {
        runs += 1
        let stem = logs.appendingPathComponent(String(format: "%03d-%@", runs, label)).path
        let outPath = stem + ".out"
        let errPath = stem + ".err"
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in Self.ports { environment[key] = value }
        let argv = (["bash", Self.script.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        #if canImport(Glibc)
        // Nothing but 0, 1 and 2 reaches the script, and so the daemons it leaves behind.
        Self.closeFromThree(&actions)
        #elseif canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif

        let started = ContinuousClock.now
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "bash", &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw Failure(description: "posix_spawnp bash \(Self.script.path): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw Failure(description: "waitpid \(pid) (syncthing-pair.sh \(label)): \(String(cString: strerror(errno)))")
            }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let result = Result(
            status: status,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            seconds: seconds)
        journal.append("\(label): \(String(format: "%.2f", seconds)) s, \(result.statusDescription)")
        return result
    }
}
