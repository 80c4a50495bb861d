#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// CLOCK_MONOTONIC in nanoseconds: the clock the child processes report, comparable across the
/// processes of one machine.
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// One test's own coordination namespace and folder of items, so that tests can run in parallel.
struct Fixture {
    let namespaceFolder: TemporaryDirectory
    let items: TemporaryDirectory
    let namespace: CoordinationNamespace
    let coordinator: FileCoordinator
    /// The package extensions, as the child takes them.
    let extensionsArgument: String

    init(packageExtensions: Set<String> = ["pkg"], watchOptions: WatchOptions = WatchOptions()) throws {
        namespaceFolder = try TemporaryDirectory(prefix: "dk-coord-ns")
        items = try TemporaryDirectory(prefix: "dk-coord-items")
        namespace = try CoordinationNamespace(directory: namespaceFolder.url, packageExtensions: packageExtensions, watchOptions: watchOptions)
        coordinator = FileCoordinator(namespace: namespace)
        extensionsArgument = packageExtensions.isEmpty ? "-" : packageExtensions.sorted().joined(separator: ",")
    }

    /// `relative` inside the item folder.
    func url(_ relative: String) -> URL { items.url.appendingPathComponent(relative) }

    func makeFolder(_ relative: String) throws {
        try FileManager.default.createDirectory(at: url(relative), withIntermediateDirectories: true)
    }

    func makeFile(_ relative: String, _ text: String = "x\n") throws {
        try FileManager.default.createDirectory(at: url(relative).deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url(relative))
    }

    /// A child that coordinates `path` with `operation` and holds it (see Tests/CoordinationChild).
    func hold(_ operation: String, _ path: String, milliseconds: Int, action: String? = nil) throws -> Child {
        try Child(
            ["hold", namespaceFolder.url.path, extensionsArgument, operation, path, String(milliseconds)] + (action.map { [$0] } ?? []),
            outputFolder: namespaceFolder.url)
    }
}

/// Whether `error` is a ``DocumentKitError`` with code `busy`.
func isBusy(_ error: any Error) -> Bool {
    (error as? DocumentKitError)?.code == .busy
}

/// A running `dk-coordination-child`. Its standard output goes to a file of its own (no pipe
/// another child could inherit), read as it grows; its standard input is a pipe: a line written
/// there ends a `hold` early.
final class Child {
    let pid: pid_t
    private let outputPath: String
    private let errorPath: String
    private let input: Int32
    private var reaped: Int32?

    /// The built `dk-coordination-child`, beside the test runner.
    static let executable: String = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = me.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("dk-coordination-child")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            directory.deleteLastPathComponent()
        }
        fatalError("dk-coordination-child not found near \(me.path); build with `swift build --build-tests`")
    }()

    init(_ arguments: [String], outputFolder: URL) throws {
        let stem = outputFolder.appendingPathComponent("child-\(UUID().uuidString.prefix(8))").path
        outputPath = stem + ".out"
        errorPath = stem + ".err"
        var inputPipe: [Int32] = [0, 0]
        guard pipe(&inputPipe) == 0 else { throw CocoaError(.fileWriteUnknown) }
        for fd in inputPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([Self.executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Self.executable, &actions, nil, argv, environ)
        close(inputPipe[0])
        guard spawned == 0 else {
            close(inputPipe[1])
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "posix_spawn: errno \(spawned)"])
        }
        self.pid = pid
        self.input = inputPipe[1]
    }

    deinit {
        close(input)
        if reaped == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        unlink(outputPath)
        unlink(errorPath)
    }

    /// The child's standard output so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// The child's standard error so far.
    var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// The time on the line `word <ns>`, if the child has written it.
    func time(_ word: String) -> UInt64? {
        for line in output.split(separator: "\n") where line.hasPrefix(word + " ") {
            return UInt64(line.dropFirst(word.count + 1))
        }
        return nil
    }

    /// Waits until the child wrote `word <ns>` (its time), or exited, or `timeout` passed (nil).
    func wait(for word: String, timeout: Duration) async -> UInt64? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let time = time(word) { return time }
            if hasExited || ContinuousClock.now >= deadline { return time(word) }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Ends a `hold` now.
    func release() {
        _ = write(input, "\n", 1)
    }

    /// Whether the child has exited (reaps it if so).
    var hasExited: Bool {
        if reaped != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped = status }
        return reaped != nil
    }

    /// Waits for the child to exit; its exit status (nil if it did not exit within `timeout`
    /// or was killed by a signal).
    func exitStatus(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while !hasExited {
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
        let status = reaped!
        return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }

    /// Kills the child with SIGKILL and reaps it.
    func killNow() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = status
    }
}
