import Foundation
import Testing

/// Runs the built `notes` executable, as a user would.
struct NotesRunner {
    /// `Formats/notes` in the repository: the notes format's specifications and fixtures.
    static let formats = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Formats/notes")

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let library: URL

    /// The `notes` binary built beside this test bundle.
    static let executable: URL = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = me.deletingLastPathComponent()
        // On Linux the test bundle is an executable in the build folder (…/debug/X.xctest).
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("notes")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        fatalError("notes executable not found near \(me.path); build with `swift build --build-tests`")
    }()

    /// The folder the `notes` processes of a test keep the index of `library` in: beside the
    /// library, in the test's temporary folder.
    static func indexCache(of library: URL) -> URL {
        library.deletingLastPathComponent().appendingPathComponent(".notes-index-cache", isDirectory: true)
    }

    /// A `notes COMMAND` process for `library` (not started): through `launcher` when given (its
    /// tool first, `notes` and the command after), without `NOTES_LIBRARY`, with the library's
    /// index kept beside it (in the test's temporary folder, not in ~/.cache), and `environment`.
    static func process(_ command: [String], library: URL, environment: [String: String], launcher: [String]) -> Process {
        let process = Process()
        if let tool = launcher.first {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = Array(launcher.dropFirst()) + [executable.path] + command
        } else {
            process.executableURL = executable
            process.arguments = command
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTES_LIBRARY")
        env["NOTES_INDEX_CACHE"] = indexCache(of: library).path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        return process
    }

    /// Runs `notes ARGS --library LIBRARY` (unless `useLibraryFlag` is false), with `input` on stdin;
    /// through `launcher` when given (`["/usr/bin/timeout", "20"]`: the command is killed if it hangs).
    @discardableResult
    func run(
        _ arguments: [String], input: String? = nil, useLibraryFlag: Bool = true, environment: [String: String] = [:],
        launcher: [String] = []
    ) throws -> Result {
        let process = Self.process(
            arguments + (useLibraryFlag ? ["--library", library.path] : []), library: library, environment: environment,
            launcher: launcher)
        let out = Pipe()
        let err = Pipe()
        let inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        NotesRunner.ignoreBrokenPipes()
        try process.run()
        // A child that exited before reading its input is no crash of ours (its status says what happened).
        if let input { try? inp.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Runs and expects success; returns stdout.
    @discardableResult
    func ok(_ arguments: [String], input: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments, input: input)
        #expect(result.status == 0, "notes \(arguments.joined(separator: " ")) failed: \(result.stderr)", sourceLocation: sourceLocation)
        return result.stdout
    }

    /// Decodes stdout as JSON.
    func json(_ arguments: [String]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try ok(arguments).utf8))
    }
}

extension NotesRunner {
    /// Makes a write to a child's input after the child exited an error (EPIPE) instead of a
    /// SIGPIPE that kills the whole test process (seen once in a parallel run of the notes suites).
    static func ignoreBrokenPipes() { _ = brokenPipesIgnored }

    private static let brokenPipesIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()
}
