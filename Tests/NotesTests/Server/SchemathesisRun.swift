#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation

/// A run of schemathesis (`st`, from PyPI, installed by `Scripts/test-python.sh` in
/// `.build/test-python`) against a live server, with the repository's `schemathesis.toml`.
struct SchemathesisRun {
    /// The repository: four folders up from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let executable = repository.appendingPathComponent(".build/test-python/bin/st")
    static let configuration = repository.appendingPathComponent("schemathesis.toml")

    let status: Int32
    let output: String

    /// What a failed run said: its failures and summary, not the progress before them.
    var report: String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let start = lines.firstIndex { $0.contains("FAILURES") || $0.contains("ERRORS") } ?? max(0, lines.count - 60)
        return lines[start...].prefix(200).joined(separator: "\n")
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "schemathesis is not installed at \(SchemathesisRun.executable.path): run Scripts/test-python.sh (make test runs it)"
        }
    }

    /// Runs `st run SCHEMA_URL` in a scratch folder (what it writes stays there), killed after `timeout`.
    static func run(schema: String, timeout: Duration = .seconds(300)) async throws -> SchemathesisRun {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else { throw Missing() }
        let scratch = try TemporaryDirectory(prefix: "schemathesis")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--config-file", configuration.path, "run", schema, "--no-color"]
        process.currentDirectoryURL = scratch.url
        process.environment = [
            "PATH": "/usr/bin:/bin", "HOME": scratch.url.path, "LANG": "C.UTF-8", "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "COLUMNS": "120",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        defer { watchdog.cancel() }
        let handle = output.fileHandleForReading
        let text = try await LoopbackHTTP.offPool {
            let data = handle.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        return SchemathesisRun(status: process.terminationStatus, output: text)
    }
}
