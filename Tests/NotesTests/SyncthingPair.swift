#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Two real Syncthing instances on loopback sharing one folder: the project's own harness for
/// the tests against a real sync engine. `a` and `b` are the two synced folders, each the working
/// copy of one "machine".
///
/// It is written in Swift, inside the test target, rather than as a shell script, so that the
/// tests need nothing but `syncthing` (which `Scripts/bootstrap.sh test` installs) and read
/// nothing outside the repository: no bash, curl, python3 or setsid, and one process spawn per
/// instance instead of several per poll. It talks to each instance's REST API over a plain
/// HTTP/1.0 connection to 127.0.0.1.
///
/// Layout of `parent/pair` (`directory`): `a/`, `b/` (the synced folders), `home-a/`, `home-b/`
/// (`config.xml`, keys, database, `syncthing.log`, `syncthing.pid`, `syncthing-child.pid`).
///
/// Configuration, written whole into each home before the first start, so that nothing ever runs
/// with Syncthing's defaults: both instances listen on 127.0.0.1 only (sync and REST) and know
/// each other by device id at a static `tcp://127.0.0.1:PORT` address; global and local
/// discovery, relays, NAT traversal, STUN, usage and crash reporting and upgrades are off. One
/// folder, `shared`, send-receive, watched (`fsWatcherDelayS=1`), rescanned every 10 s.
///
/// What Syncthing does that the harness allows for (measured with Syncthing 1.19):
/// - Syncthing 1.x runs a monitor process that starts the real syncthing as its child, even with
///   `--no-restart`: both PIDs are kept; `stop()` sends TERM to the monitor (which forwards it),
///   and KILL to whichever is still alive 15 s later.
/// - When both instances dial each other at the same instant, the two Hello exchanges can wait on
///   each other for 20 s: `b` is started only once `a`'s REST API answers.
/// - A resumed device may take about 5 s to reconnect (Syncthing allows 3 forced redials per
///   device in 2 minutes, then its dial loop wakes every 5 s).
/// - A paused folder reports state `""` or `paused`, and its completion answers 404.
/// - A pull that failed with "file modified but not rescanned" is retried only after a minute:
///   `waitSync()` asks both sides to rescan every 5 s while they are not in sync.
///
/// The daemons are spawned with `posix_spawn` without setsid: they stay in the test process's
/// process group (an interrupt of `swift test` reaches them too) and inherit no descriptor but
/// standard input (/dev/null), output and error (their log file): a child that inherited a pipe
/// or Foundation `Process`'s exit-detection socket would keep it open as long as it lives.
///
/// Always `stop()` a started pair (`defer { pair.stop() }`): the daemons outlive the test process.
final class SyncthingPair {
    enum Side: String, CaseIterable, CustomStringConvertible {
        case a, b
        var description: String { rawValue }
        var peer: Side { self == .a ? .b : .a }
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

    /// The ports of one pair on 127.0.0.1: sync (BEP) and REST (GUI). Pairs that may run at once
    /// (tests of different suites) each have their own.
    struct Ports {
        var sync: [Side: UInt16]
        var rest: [Side: UInt16]
        /// Not Syncthing's default (22000), nor 22001/22002, which other helpers on a developer's machine use.
        static let standard = Ports(sync: [.a: 22201, .b: 22202], rest: [.a: 8585, .b: 8586])
    }
    static let folderID = "shared"

    /// `ST_BIN`, else `syncthing` on PATH.
    static var executable: String { ProcessInfo.processInfo.environment["ST_BIN"] ?? "syncthing" }
    /// How long `start`, `waitSync`, `pause`, `resume` and `scan` wait: `ST_TIMEOUT` seconds, else 60.
    static var timeout: Double { ProcessInfo.processInfo.environment["ST_TIMEOUT"].flatMap(Double.init) ?? 60 }

    /// One instance: its paths, identity, REST key and processes.
    private struct Instance {
        let side: Side
        let folder: URL
        let home: URL
        let apiKey: String
        var deviceID = ""
        /// The schema version of the configuration `syncthing generate` wrote.
        var configurationVersion = ""
        /// The process started (Syncthing 1.x: the monitor); 0 before the start.
        var pid: pid_t = 0
        /// The syncthing the monitor runs; 0 if there is none.
        var childPID: pid_t = 0
        /// How the started process ended, once it has (`waitpid` status).
        var exitStatus: Int32?
    }

    /// The folder of the pair: `a/`, `b/`, `home-a/`, `home-b/`.
    let directory: URL
    /// The pair's ports.
    let ports: Ports
    /// Standard output and error of every `syncthing` run to completion (generate, device id).
    let logs: URL
    /// Each harness step: what, how long, how it ended.
    private(set) var journal: [String] = []
    private var instances: [Side: Instance]
    private var runs = 0
    private var stopped = false

    /// Side a's synced folder.
    var aDir: URL { dir(.a) }
    /// Side b's synced folder.
    var bDir: URL { dir(.b) }

    /// The synced folder of `side`.
    func dir(_ side: Side) -> URL { instances[side]!.folder }

    /// Syncthing's home (configuration, database, `syncthing.log`) of `side`.
    func home(_ side: Side) -> URL { instances[side]!.home }

    /// The 7-character short id of `side`'s device: what Syncthing puts in conflict copies' names.
    func shortDeviceID(_ side: Side) -> String { String(instances[side]!.deviceID.prefix(7)) }

    private init(directory: URL, logs: URL, ports: Ports) {
        self.directory = directory
        self.ports = ports
        self.logs = logs
        var instances: [Side: Instance] = [:]
        for side in Side.allCases {
            let key = String((0..<32).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement()! })
            instances[side] = Instance(
                side: side, folder: directory.appendingPathComponent(side.rawValue, isDirectory: true),
                home: directory.appendingPathComponent("home-\(side)", isDirectory: true), apiKey: key)
        }
        self.instances = instances
    }

    deinit {
        if !stopped { stop() }
    }

    // MARK: Starting and stopping

    /// Checks that `syncthing` is here, then sets up `parent/pair` (the output of `syncthing`
    /// runs goes to `parent/harness-logs`), starts both instances and waits until they are
    /// connected and in sync. A failure stops what was started.
    static func start(in parent: URL, ports: Ports = .standard) throws -> SyncthingPair {
        try checkPrerequisites()
        let directory = parent.appendingPathComponent("pair", isDirectory: true)
        let logs = parent.appendingPathComponent("harness-logs", isDirectory: true)
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let pair = SyncthingPair(directory: directory, logs: logs, ports: ports)
        do {
            try pair.timed("up") { try pair.up() }
        } catch {
            pair.stop()
            throw Failure(description: "starting the Syncthing pair failed: \(error)\n\(pair.logTails())")
        }
        return pair
    }

    private func up() throws {
        let busy = Side.allCases.flatMap { [ports.sync[$0]!, ports.rest[$0]!] }.filter { !Self.isFree($0) }
        guard busy.isEmpty else {
            throw Failure(
                description: "port(s) \(busy.map(String.init).joined(separator: ", ")) on 127.0.0.1 already in use. "
                    + "(A pair left running by a test process that crashed? `pgrep -af 'syncthing serve'` shows its "
                    + "--home=…/pair/home-a; stop it with `kill PID` (the PIDs are in home-a/syncthing.pid and home-b/syncthing.pid).)")
        }
        for side in Side.allCases {
            let instance = instances[side]!
            // `.stfolder` is Syncthing's folder marker; without it the folder stops with an error.
            try FileManager.default.createDirectory(
                at: instance.folder.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: instance.home, withIntermediateDirectories: true)
            let configuration = instance.home.appendingPathComponent("config.xml")
            if !FileManager.default.fileExists(atPath: instance.home.appendingPathComponent("cert.pem").path) {
                try runToCompletion(["generate", "--home=\(instance.home.path)", "--no-default-folder"], label: "generate-\(side)")
            }
            let id = try runToCompletion(["serve", "--home=\(instance.home.path)", "--device-id"], label: "device-id-\(side)")
            instances[side]!.deviceID = id.trimmingCharacters(in: .whitespacesAndNewlines)
            guard instances[side]!.deviceID.count >= 7 else {
                throw Failure(description: "syncthing serve --device-id printed no device id for \(side): \(id.debugDescription)")
            }
            // The generated configuration's schema version, so that Syncthing does not migrate ours.
            let generated = (try? String(contentsOf: configuration, encoding: .utf8)) ?? ""
            guard let match = generated.firstMatch(of: /<configuration version="([0-9]+)"/) else {
                throw Failure(description: "no configuration version in \(configuration.path) (syncthing generate failed?)")
            }
            instances[side]!.configurationVersion = String(match.1)
        }
        for side in Side.allCases {
            let instance = instances[side]!
            try Data(configuration(for: side).utf8).write(to: instance.home.appendingPathComponent("config.xml"))
        }
        // a first, and b only once a's REST API (and so its listener) is up: see the type's comment.
        for side in Side.allCases {
            try launch(side)
            try wait("\(side)'s REST API to answer") { pair in
                try pair.request(side, "GET", "/rest/system/ping").status == 200 ? .ok("") : .wait("no answer yet")
            }
            findChild(side)
        }
        try wait("the two devices to connect") { try $0.evaluate(.connected) }
        try wait("folder '\(Self.folderID)' to be idle and in sync", confirmations: 2) { try $0.evaluate(.synced) }
    }

    /// Stops both instances: TERM to the started process (the monitor, which forwards it), KILL
    /// to any still alive 15 s later (noted in the journal). Deletes nothing. Calling it again
    /// does nothing.
    func stop() {
        guard !stopped else { return }
        stopped = true
        let started = ContinuousClock.now
        for side in Side.allCases where instances[side]!.pid > 0 {
            // (A start that failed before the REST API answered has not looked for the child yet.)
            if instances[side]!.childPID == 0, isRunning(side) { findChild(side) }
            let instance = instances[side]!
            if isRunning(side) {
                kill(instance.pid, SIGTERM)
            } else if isAlive(instance.childPID, side) {
                kill(instance.childPID, SIGTERM)
            }
        }
        let deadline = ContinuousClock.now + .seconds(15)
        while Side.allCases.contains(where: { isRunning($0) || isAlive(instances[$0]!.childPID, $0) }), ContinuousClock.now < deadline {
            usleep(50_000)
        }
        for side in Side.allCases {
            let instance = instances[side]!
            if isAlive(instance.childPID, side) {
                journal.append("stop: syncthing \(side) (pid \(instance.childPID)) ignored TERM for 15 s; sending KILL")
                kill(instance.childPID, SIGKILL)
            }
            if isRunning(side) {
                journal.append("stop: syncthing \(side) (pid \(instance.pid)) ignored TERM for 15 s; sending KILL")
                kill(instance.pid, SIGKILL)
                var status: Int32 = 0
                while waitpid(instance.pid, &status, 0) < 0 && errno == EINTR {}
            }
        }
        journal.append("stop: \(Self.seconds(ContinuousClock.now - started))")
    }

    /// Throws, saying what to install, unless `syncthing` is here.
    static func checkPrerequisites() throws {
        let skip = "(or set \(optOutVariable)=1 to skip the tests against a real Syncthing pair)"
        guard findExecutable(executable) != nil else {
            throw Failure(
                description: "syncthing is not installed (`\(executable)` \(executable.contains("/") ? "is not an executable" : "is not on PATH")): install it with "
                    + "`Scripts/bootstrap.sh test` (or `apt-get install syncthing`) \(skip)")
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

    /// Side `side` pauses its peer device (the connection drops; waits for it) or the folder
    /// (it then neither scans nor syncs; waits until it reports so).
    func pause(_ side: Side, _ target: Target = .device) throws {
        try timed("pause-\(side)-\(target)") {
            try setPaused(true, side, target)
            switch target {
            case .device: try wait("the connection to drop") { try $0.evaluate(.disconnected) }
            case .folder: try wait("folder '\(Self.folderID)' on \(side) to pause") { try $0.evaluate(.folderPaused(side)) }
            }
        }
    }

    /// Undoes `pause`; waits until connected again (and the folder running), not until in sync
    /// (call `waitSync()`).
    func resume(_ side: Side, _ target: Target = .device) throws {
        try timed("resume-\(side)-\(target)") {
            try setPaused(false, side, target)
            switch target {
            case .device: try wait("the devices to reconnect") { try $0.evaluate(.connected) }
            case .folder: try wait("folder '\(Self.folderID)' on \(side) to resume") { try $0.evaluate(.folderRunning) }
            }
        }
    }

    /// Rescans both sides (or `side`) now and returns when the scan is done: makes local edits
    /// known without waiting for the filesystem watcher.
    func scan(_ side: Side? = nil) throws {
        try timed("scan") {
            for side in side.map({ [$0] }) ?? Side.allCases { try rescan(side) }
        }
    }

    /// Rescans both sides, then waits until both are connected, idle and in sync (twice in a row),
    /// asking both to rescan every 5 s meanwhile. Fails at once if a side has the peer device or
    /// the folder paused.
    func waitSync() throws {
        try timed("wait-sync") {
            for side in Side.allCases {
                if try json(side, "GET", "/rest/config/folders/\(Self.folderID)")["paused"] as? Bool == true {
                    throw Failure(description: "side \(side) has the folder paused; resume it first")
                }
                try rescan(side)
            }
            var nextRescan = ContinuousClock.now + .seconds(5)
            try wait("folder '\(Self.folderID)' to be in sync", confirmations: 2) { pair in
                if ContinuousClock.now >= nextRescan {
                    for side in Side.allCases { _ = try? pair.request(side, "POST", "/rest/db/scan?folder=\(Self.folderID)") }
                    nextRescan = ContinuousClock.now + .seconds(5)
                }
                return try pair.evaluate(.synced)
            }
        }
    }

    /// One line per side: PIDs, connection, folder state; or why there is none.
    func status() -> String {
        Side.allCases.map { side in
            let instance = instances[side]!
            let pids = "pids \(instance.pid)/\(instance.childPID)"
            guard isRunning(side) || isAlive(instance.childPID, side) else {
                return "\(side): \(pids), not running" + (instance.exitStatus.map { " (\(Self.describe(status: $0)))" } ?? "")
            }
            do {
                let snapshot = try self.snapshot(side)
                let folder = snapshot.folder["paused"] as? Bool == true ? "paused" : "\(snapshot.status["state"] ?? "?")"
                return "\(side): \(pids) dir=\(instance.folder.path) connected=\(snapshot.connected) "
                    + "peerPaused=\(snapshot.device["paused"] ?? "?") folder=\(folder) "
                    + "needTotalItems=\(snapshot.status["needTotalItems"] ?? "?") pullErrors=\(snapshot.status["pullErrors"] ?? "?") "
                    + "globalFiles=\(snapshot.status["globalFiles"] ?? "?") localFiles=\(snapshot.status["localFiles"] ?? "?")"
            } catch {
                return "\(side): \(pids), REST API not answering: \(error)"
            }
        }.joined(separator: "\n")
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

    // MARK: Configuration

    /// `side`'s whole `config.xml`. Syncthing fills in its defaults for what is missing, except
    /// in a folder element, where a few missing fields are zero instead (Syncthing 1.19): the
    /// folder spells out those that differ from the folder defaults of a generated configuration,
    /// above all `maxConflicts` (0 would mean no conflict copies: the loser's edit is dropped).
    private func configuration(for side: Side) -> String {
        let me = instances[side]!
        let peer = instances[side.peer]!
        func xml(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let options: [(String, String)] = [
            ("listenAddress", "tcp://127.0.0.1:\(ports.sync[side]!)"),
            ("globalAnnounceEnabled", "false"),
            ("localAnnounceEnabled", "false"),
            ("relaysEnabled", "false"),
            ("natEnabled", "false"),
            ("stunKeepaliveStartS", "0"),
            ("stunKeepaliveMinS", "0"),
            ("urAccepted", "-1"),
            ("autoUpgradeIntervalH", "0"),
            ("crashReportingEnabled", "false"),
            ("startBrowser", "false"),
            ("restartOnWakeup", "false"),
            ("announceLANAddresses", "false"),
            ("setLowPriority", "false"),
            ("reconnectionIntervalS", "2"),
        ]
        return """
            <configuration version="\(me.configurationVersion)">
                <device id="\(me.deviceID)" name="\(side)" compression="metadata" introducer="false">
                    <address>dynamic</address>
                    <paused>false</paused>
                    <autoAcceptFolders>false</autoAcceptFolders>
                </device>
                <device id="\(peer.deviceID)" name="\(side.peer)" compression="metadata" introducer="false">
                    <address>tcp://127.0.0.1:\(ports.sync[side.peer]!)</address>
                    <paused>false</paused>
                    <autoAcceptFolders>false</autoAcceptFolders>
                </device>
                <folder id="\(Self.folderID)" label="\(Self.folderID)" path="\(xml(me.folder.path))" type="sendreceive" rescanIntervalS="10" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
                    <device id="\(me.deviceID)" introducedBy=""></device>
                    <device id="\(peer.deviceID)" introducedBy=""></device>
                    <minDiskFree unit="%">1</minDiskFree>
                    <maxConflicts>10</maxConflicts>
                    <paused>false</paused>
                </folder>
                <gui enabled="true" tls="false">
                    <address>127.0.0.1:\(ports.rest[side]!)</address>
                    <apikey>\(me.apiKey)</apikey>
                </gui>
                <options>
            \(options.map { "        <\($0.0)>\(xml($0.1))</\($0.0)>" }.joined(separator: "\n"))
                </options>
            </configuration>

            """
    }

    /// Whether nothing listens on, or is bound to, `port` of 127.0.0.1. (Connections of an
    /// earlier pair in TIME_WAIT do not count: Syncthing's listener reuses the address too.)
    private static func isFree(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    #if canImport(Glibc)
    private static let streamSocket = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamSocket = SOCK_STREAM
    #endif

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    // MARK: Waiting

    /// What a wait looks for.
    private enum Condition {
        case connected, disconnected, synced, folderRunning
        case folderPaused(Side)
    }

    private enum Verdict {
        case ok(String)
        case wait(String)
        case fail(String)
    }

    /// What one side's REST API says about the peer and the folder.
    private struct Snapshot {
        var connected: Bool
        var status: [String: Any]
        var completion: [String: Any]
        var device: [String: Any]
        var folder: [String: Any]
    }

    /// Polls `check` every 0.25 s until it says OK `confirmations` times in a row, or fails, or
    /// the time limit passes. Fails at once when an instance is no longer running.
    private func wait(_ what: String, confirmations: Int = 1, _ check: (SyncthingPair) throws -> Verdict) throws {
        let deadline = ContinuousClock.now + .seconds(Self.timeout)
        var last = ""
        var confirmed = 0
        while true {
            for side in Side.allCases where instances[side]!.pid > 0 && !isRunning(side) {
                throw Failure(
                    description: "\(what): instance \(side) is not running (\(instances[side]!.exitStatus.map(Self.describe(status:)) ?? "?")); "
                        + "see \(home(side).path)/syncthing.log")
            }
            let verdict: Verdict
            do { verdict = try check(self) } catch { verdict = .wait("REST API not answering: \(error)") }
            switch verdict {
            case .ok:
                confirmed += 1
                if confirmed >= confirmations { return }
            case .fail(let why):
                throw Failure(description: "\(what): \(why)")
            case .wait(let why):
                confirmed = 0
                last = why
            }
            guard ContinuousClock.now < deadline else {
                throw Failure(description: "timeout after \(String(format: "%g", Self.timeout)) s waiting for \(what); last state: \(last)")
            }
            usleep(250_000)
        }
    }

    private func snapshot(_ side: Side) throws -> Snapshot {
        let peerID = instances[side.peer]!.deviceID
        let connections = try json(side, "GET", "/rest/system/connections")
        let connection = (connections["connections"] as? [String: Any])?[peerID] as? [String: Any]
        // An endpoint that answers with an HTTP error (the completion of a paused folder: 404
        // "folder is paused") is kept as ["_error": …] for the condition to judge.
        func lenient(_ path: String) throws -> [String: Any] {
            let reply = try request(side, "GET", path)
            guard reply.status == 200 else { return ["_error": "HTTP \(reply.status): \(reply.text)"] }
            return (try? JSONSerialization.jsonObject(with: reply.body)) as? [String: Any] ?? ["_error": "not JSON: \(reply.text)"]
        }
        return Snapshot(
            connected: connection?["connected"] as? Bool == true,
            status: try lenient("/rest/db/status?folder=\(Self.folderID)"),
            completion: try lenient("/rest/db/completion?folder=\(Self.folderID)&device=\(peerID)"),
            device: try lenient("/rest/config/devices/\(peerID)"),
            folder: try lenient("/rest/config/folders/\(Self.folderID)"))
    }

    private func evaluate(_ condition: Condition) throws -> Verdict {
        var snapshots: [Side: Snapshot] = [:]
        for side in Side.allCases { snapshots[side] = try snapshot(side) }
        var waiting: [String] = []
        func number(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }
        switch condition {
        case .connected:
            for side in Side.allCases where !snapshots[side]!.connected { waiting.append("\(side) not connected to \(side.peer)") }
        case .disconnected:
            for side in Side.allCases where snapshots[side]!.connected { waiting.append("\(side) still connected to \(side.peer)") }
        case .folderPaused(let side):
            let state = snapshots[side]!.status["state"] as? String
            if snapshots[side]!.folder["paused"] as? Bool != true || !["", "paused"].contains(state) {
                waiting.append("\(side) folder state=\(state.debugDescription)")
            }
        case .folderRunning:
            for side in Side.allCases {
                let state = snapshots[side]!.status["state"] as? String
                if snapshots[side]!.folder["paused"] as? Bool == true || state == nil || ["", "paused"].contains(state) {
                    waiting.append("\(side) folder not running (state=\(state.debugDescription))")
                }
                if !snapshots[side]!.connected { waiting.append("\(side) not connected to \(side.peer)") }
            }
        case .synced:
            for side in Side.allCases {
                if snapshots[side]!.device["paused"] as? Bool == true {
                    return .fail("side \(side) has its peer device paused; resume it first")
                }
                if snapshots[side]!.folder["paused"] as? Bool == true {
                    return .fail("side \(side) has the folder paused; resume it first")
                }
            }
            for side in Side.allCases {
                let status = snapshots[side]!.status
                let completion = snapshots[side]!.completion
                var why: [String] = []
                if !snapshots[side]!.connected { why.append("not connected") }
                if status["state"] as? String != "idle" { why.append("state=\(status["state"] ?? "nil")") }
                for key in ["needTotalItems", "pullErrors", "errors"] where (number(status[key]) ?? 0) != 0 {
                    why.append("\(key)=\(status[key]!)")
                }
                if let error = status["_error"] { why.append("db/status: \(error)") }
                if let error = completion["_error"] {
                    why.append("db/completion: \(error)")
                } else if number(completion["completion"]) != 100 || (number(completion["needItems"]) ?? 0) != 0 {
                    why.append("peer completion=\(completion["completion"] ?? "nil") needItems=\(completion["needItems"] ?? "nil")")
                }
                if let remote = completion["remoteState"] as? String, !["valid", "unknown"].contains(remote) {
                    why.append("remoteState=\(remote)")
                }
                for kind in ["Files", "Directories", "Symlinks", "Bytes"] where number(status["local" + kind]) != number(status["global" + kind]) {
                    why.append("local\(kind)=\(status["local" + kind] ?? "nil") != global\(kind)=\(status["global" + kind] ?? "nil")")
                }
                if !why.isEmpty { waiting.append("\(side): " + why.joined(separator: ", ")) }
            }
            for key in ["globalFiles", "globalDirectories", "globalSymlinks", "globalBytes"] {
                let (a, b) = (number(snapshots[.a]!.status[key]), number(snapshots[.b]!.status[key]))
                if a != b { waiting.append("\(key) a=\(a.map(String.init) ?? "nil") b=\(b.map(String.init) ?? "nil")") }
            }
        }
        return waiting.isEmpty ? .ok("") : .wait(waiting.joined(separator: "; "))
    }

    private func setPaused(_ paused: Bool, _ side: Side, _ target: Target) throws {
        let path =
            switch target {
            case .device: "/rest/config/devices/\(instances[side.peer]!.deviceID)"
            case .folder: "/rest/config/folders/\(Self.folderID)"
            }
        let reply = try request(side, "PATCH", path, body: "{\"paused\": \(paused)}")
        guard reply.status == 200 else {
            throw Failure(description: "\(paused ? "pausing" : "resuming") the \(target) on \(side): HTTP \(reply.status) \(reply.text)")
        }
    }

    /// `POST /rest/db/scan`, which answers when the scan is done.
    private func rescan(_ side: Side) throws {
        let reply = try request(side, "POST", "/rest/db/scan?folder=\(Self.folderID)", timeout: Self.timeout)
        guard reply.status == 200 else {
            throw Failure(description: "rescan on \(side): HTTP \(reply.status) \(reply.text) (a paused folder cannot scan)")
        }
    }

    // MARK: REST

    private struct Reply {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The JSON object a `200` reply holds; throws on anything else.
    private func json(_ side: Side, _ method: String, _ path: String) throws -> [String: Any] {
        let reply = try request(side, method, path)
        guard reply.status == 200, let object = (try? JSONSerialization.jsonObject(with: reply.body)) as? [String: Any] else {
            throw Failure(description: "\(method) \(path) on \(side): HTTP \(reply.status) \(reply.text)")
        }
        return object
    }

    /// One HTTP/1.0 request to `side`'s REST API on 127.0.0.1 (the server closes the connection
    /// after the reply, so the body is everything after the headers).
    private func request(_ side: Side, _ method: String, _ path: String, body: String? = nil, timeout: Double = 15) throws -> Reply {
        let port = ports.rest[side]!
        let descriptor = socket(AF_INET, Self.streamSocket, 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.loopback(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        let payload = Data((body ?? "").utf8)
        var head = "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nX-API-Key: \(instances[side]!.apiKey)\r\n"
        if body != nil { head += "Content-Type: application/json\r\n" }
        head += "Content-Length: \(payload.count)\r\n\r\n"
        let message = Data(head.utf8) + payload
        try message.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "\(method) \(path) to \(side): send: \(String(cString: strerror(errno)))")
                }
                offset += sent
            }
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(
                    description: "\(method) \(path) to \(side): \(errno == EAGAIN ? "no reply within \(Int(timeout)) s" : String(cString: strerror(errno)))")
            }
            received.append(contentsOf: buffer[..<count])
        }
        guard let end = received.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "\(method) \(path) to \(side): no complete HTTP reply (\(received.count) bytes)")
        }
        let statusLine = String(decoding: received[..<end.lowerBound], as: UTF8.self).prefix { $0 != "\r" }
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, let status = Int(fields[1]) else {
            throw Failure(description: "\(method) \(path) to \(side): bad status line \(statusLine.debugDescription)")
        }
        return Reply(status: status, body: Data(received[end.upperBound...]))
    }

    // MARK: Processes

    /// Runs `syncthing ARGUMENTS` to completion, standard output and error into files under
    /// `logs`; returns standard output; throws if it failed.
    @discardableResult
    private func runToCompletion(_ arguments: [String], label: String) throws -> String {
        runs += 1
        let stem = logs.appendingPathComponent(String(format: "%03d-%@", runs, label)).path
        let pid = try spawn(arguments, output: stem + ".out", error: stem + ".err", append: false)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(description: "waitpid \(pid) (\(label)): \(String(cString: strerror(errno)))") }
        }
        let output = (try? String(contentsOfFile: stem + ".out", encoding: .utf8)) ?? ""
        guard status == 0 else {
            let error = (try? String(contentsOfFile: stem + ".err", encoding: .utf8)) ?? ""
            throw Failure(
                description: "syncthing \(arguments.joined(separator: " ")) failed (\(Self.describe(status: status))):\n\(output)\(error)")
        }
        return output
    }

    /// Starts `side`'s instance, its output appended to `home/syncthing.log`.
    private func launch(_ side: Side) throws {
        let home = instances[side]!.home
        let log = home.appendingPathComponent("syncthing.log").path
        let pid = try spawn(
            ["serve", "--home=\(home.path)", "--no-browser", "--no-restart", "--no-upgrade", "--logflags=7"],
            output: log, error: log, append: true,
            environment: ["STNODEFAULTFOLDER": "1", "STNOUPGRADE": "1", "STNORESTART": "1"])
        instances[side]!.pid = pid
        try? "\(pid)\n".write(toFile: home.appendingPathComponent("syncthing.pid").path, atomically: true, encoding: .utf8)
    }

    /// Records the syncthing that `side`'s monitor runs (Syncthing 1.x), once its REST API
    /// answers (so it exists); none if the started process is syncthing itself.
    private func findChild(_ side: Side) {
        let pid = instances[side]!.pid
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        // Any thread of the (Go) monitor may be the parent.
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ")
                .compactMap { pid_t($0) }
        }
        guard let child = children.first(where: { isAlive($0, side) }) else { return }
        instances[side]!.childPID = child
        try? "\(child)\n".write(toFile: home(side).appendingPathComponent("syncthing-child.pid").path, atomically: true, encoding: .utf8)
    }

    /// Whether the process this harness started for `side` is still running (reaps it if not).
    private func isRunning(_ side: Side) -> Bool {
        let pid = instances[side]!.pid
        guard pid > 0, instances[side]!.exitStatus == nil else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return true }
        instances[side]!.exitStatus = result == pid ? status : -1
        return false
    }

    /// Whether `pid` is a live (not zombie) syncthing serving `side`'s home: a PID is checked
    /// before it is signalled, as it may have been reused.
    private func isAlive(_ pid: pid_t, _ side: Side) -> Bool {
        guard pid > 0, let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return arguments.contains("--home=\(home(side).path)")
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

    /// Spawns `syncthing ARGUMENTS` with standard input from /dev/null, standard output and error
    /// into files, and no other descriptor of this process.
    private func spawn(
        _ arguments: [String], output: String, error: String, append: Bool, environment extra: [String: String] = [:]
    ) throws -> pid_t {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        let argv = ([Self.executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, flags, 0o644)
        if error == output {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, error, flags, 0o644)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        #if canImport(Glibc)
        Self.closeFromThree(&actions)
        #elseif canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif

        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, Self.executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            throw Failure(description: "posix_spawnp \(Self.executable): \(String(cString: strerror(spawned)))")
        }
        return pid
    }

    // MARK: Journal

    /// Runs `body`, noting in the journal how long it took and how it ended.
    private func timed(_ label: String, _ body: () throws -> Void) throws {
        let started = ContinuousClock.now
        do {
            try body()
            journal.append("\(label): \(Self.seconds(ContinuousClock.now - started))")
        } catch {
            journal.append("\(label): \(Self.seconds(ContinuousClock.now - started)), failed: \(error)")
            throw error
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// "exit N" or "signal N".
    private static func describe(status: Int32) -> String {
        (status & 0x7f) == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
    }
}
