#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Foundation

/// One run of a child process: wall-clock time from spawn to reaping, and its peak memory.
struct ChildRun {
    /// `CLOCK_MONOTONIC` from just before `posix_spawn` to just after `wait4`, in nanoseconds.
    let elapsed: UInt64
    /// `ru_maxrss` of the child, in bytes.
    let peakMemory: UInt64
    let status: Int32
    /// Standard output, when asked for (else it went to /dev/null).
    let output: String
    let errors: String
}

/// Spawns child processes with `posix_spawn` and reaps them with `wait4`, so that each run's
/// resource use (peak memory) is the child's alone.
struct ChildProcess {
    let executable: String
    /// Variables added to (or replacing those of) this process's environment.
    var environment: [String: String] = [:]
    /// Where standard output and standard error are collected (files, rewritten every run).
    let scratch: String

    /// Runs `arguments` and waits; throws unless it exits with status 0.
    @discardableResult
    func run(_ arguments: [String], captureOutput: Bool = false, extraEnvironment: [String: String] = [:]) throws -> ChildRun {
        let result = try spawn(arguments, captureOutput: captureOutput, extraEnvironment: extraEnvironment)
        guard result.status == 0 else {
            throw BenchError(description: "\(executable) \(arguments.joined(separator: " ")) exited with \(result.status): \(result.errors)")
        }
        return result
    }

    /// Runs `arguments` and waits, whatever the exit status (a signal is `128 + signal`).
    func spawn(_ arguments: [String], captureOutput: Bool = false, extraEnvironment: [String: String] = [:]) throws -> ChildRun {
        let outPath = scratch + "/child.out"
        let errPath = scratch + "/child.err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, captureOutput ? outPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment { variables[key] = value }
        for (key, value) in extraEnvironment { variables[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }

        var pid: pid_t = 0
        let start = now()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw BenchError(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard dk_errno() == EINTR else { try check(-1, "wait4 \(executable)"); break }
        }
        let elapsed = now() - start
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = captureOutput ? ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "") : ""
        let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return ChildRun(
            elapsed: elapsed, peakMemory: UInt64(usage.ru_maxrss) * 1024, status: exitStatus, output: output, errors: errors)
    }

    /// The executable named `name` in the folder of this process's own executable.
    static func sibling(named name: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        try check(CInt(length < 0 ? -1 : 0), "readlink /proc/self/exe")
        let own = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path
        guard access(path, X_OK) == 0 else {
            throw BenchError(description: "no \(name) next to docbench (\(path)): build it, e.g. `swift build -c release --product \(name)`")
        }
        return path
    }
}
