#if canImport(Glibc)
import Glibc
#endif
import DocumentKitTesting
import Foundation
import Testing

/// A 200 MB attachment costs `notes` no memory: attach, show and append stream it (issue #14 §4).
@Suite struct NotesLargeAttachmentTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-large")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    /// The bound the issue sets on memory above the process's base.
    static let bound = 64 << 20

    @Test("attach, show and two edits of a note with a 200 MB attachment peak within 64 MiB of the same on a tiny note")
    func largeAttachmentInBoundedMemory() throws {
        // Sparse, but for a random head and tail: reading it costs no disk, hashing it the full 200 MB.
        let big = directory.appending("big.bin")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        var random = SeededRandom(seed: 14)
        try handle.write(contentsOf: Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try handle.seek(toOffset: 200_000_000 - 4096)
        try handle.write(contentsOf: Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try handle.close()
        let tiny = directory.appending("tiny.txt")
        try Data("tiny\n".utf8).write(to: tiny)
        try notes.ok(["new", "Tiny", "--body", "small"])
        try notes.ok(["new", "Big", "--body", "large"])

        let pairs: [(String, [String], [String])] = [
            ("attach", ["attach", "Tiny", tiny.path], ["attach", "Big", big.path]),
            ("show", ["show", "Tiny"], ["show", "Big"]),
            ("edit --append", ["edit", "Tiny", "--append", "more"], ["edit", "Big", "--append", "more"]),
            // The version this edit keeps shares the attachment with the one the first kept: compared, not loaded.
            ("edit --append, again", ["edit", "Tiny", "--append", "again"], ["edit", "Big", "--append", "again"]),
        ]
        for (command, small, large) in pairs {
            let base = try notes.peakMemory(small)
            let peak = try notes.peakMemory(large)
            #expect(peak - base <= Self.bound, "notes \(command): \(peak >> 20) MiB with the 200 MB attachment, \(base >> 20) MiB without")
        }
        let attached = directory.appending("Library/big.note/attachments/big.bin")
        #expect(FileManager.default.contentsEqual(atPath: attached.path, andPath: big.path))
        #expect(try notes.ok(["show", "Big"]) == "large\nmore\nagain\n")
        #expect(try notes.run(["check"]).status == 0)
    }
}

extension NotesRunner {
    /// Runs `notes ARGS --library LIBRARY`, expecting success, and returns the peak resident
    /// memory of the process in bytes (`ru_maxrss` of `wait4(2)`: exact, not sampled).
    func peakMemory(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let argv = [Self.executable.path] + arguments + ["--library", library.path]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        try #require(spawned == 0, "posix_spawn: \(spawned)", sourceLocation: sourceLocation)
        var status: CInt = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        #expect(status == 0, "notes \(arguments.joined(separator: " ")) exited with \(status)", sourceLocation: sourceLocation)
        return usage.ru_maxrss * 1024
    }
}
