import DocumentKitTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue #13 §5: errors a person can act on: the right exit status for what went wrong, the error
/// first, a JSON error with `--json`, a read-only library and a library path that is a file said as such.
@Suite(.timeLimit(.minutes(2)))
struct NotesExitStatusTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-status")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "Pack light."])
    }

    @Test("with --json an error is a JSON object on stderr, with the exit status, code and path")
    func jsonErrors() throws {
        let result = try notes.run(["show", "Nowhere", "--json"])
        #expect(result.status == 66)
        let object = try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: Any], "stderr: \(result.stderr)")
        #expect(error["status"] as? Int == 66)
        #expect((error["message"] as? String)?.contains("Nowhere") == true)
    }

    @Test("a library path that is a file: list and init say so (exit 73), instead of “run notes init”")
    func libraryPathIsAFile() throws {
        let file = directory.appending("file")
        try Data("x".utf8).write(to: file)
        let runner = NotesRunner(library: file)
        for command in [["list"], ["init"]] {
            let result = try runner.run(command)
            #expect(result.status == 73, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("is a file, not a library folder"), "\(command): \(result.stderr)")
        }
    }

    @Test("a package name at the file system's limit saves: its new package is built in the version store (format 4), where no longer name is needed")
    func nameAtTheLimitSaves() throws {
        // 255 bytes: a save that wrote a temporary item beside it (`.NAME.dk-new-…`) failed with ENAMETOOLONG
        // (exit 73, "rename the package to a shorter name"; the hint stays for saves that still do).
        let long = String(repeating: "a", count: 250) + ".note"
        try FileManager.default.moveItem(at: notes.library.appendingPathComponent("trip.note"), to: notes.library.appendingPathComponent(long))
        let result = try notes.run(["edit", "Trip", "--append", "x"])
        #expect(result.status == 0, "\(result.stderr)")
        let shown = try notes.ok(["show", "Trip"])
        #expect(shown.contains("Pack light.") && shown.contains("x"), "\(shown)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: notes.library.path).filter { $0.contains(".dk-") }.isEmpty)
    }

    @Test("two notes with one title exit 65 (not 64), naming both; a symbolic link to a note is that note")
    func oneTitleTwoNotes() throws {
        try FileManager.default.createSymbolicLink(
            at: notes.library.appendingPathComponent("alias.note"), withDestinationURL: notes.library.appendingPathComponent("trip.note"))
        #expect(try notes.ok(["show", "Trip"]).contains("Pack light."))
        try FileManager.default.copyItem(at: notes.library.appendingPathComponent("trip.note"), to: notes.library.appendingPathComponent("copy.note"))
        let result = try notes.run(["show", "Trip"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("copy.note") && result.stderr.contains("trip.note"))
    }

    @Test("a read-only library: edit exits 77 saying so, with no warning about previous versions; check says read-only")
    func readOnlyLibrary() throws {
        let mounted = try ReadOnlyView(of: notes.library)
        defer { mounted.undo() }
        let before = try String(contentsOf: notes.library.appendingPathComponent("trip.note/body.json"), encoding: .utf8)
        let edit = try notes.run(["edit", "Trip", "--append", "x"])
        #expect(edit.status == 77, "\(edit.stderr)")
        #expect(edit.stderr.contains("read-only"))
        #expect(!edit.stderr.contains("previous version"), "\(edit.stderr)")
        #expect(try notes.ok(["show", "Trip"]).contains("Pack light."))
        let check = try notes.run(["check", "Trip"])
        #expect(check.stdout.contains("trip.note: read-only"), "\(check.stdout)")
        mounted.undo()
        #expect(try String(contentsOf: notes.library.appendingPathComponent("trip.note/body.json"), encoding: .utf8) == before)
    }

    @Test("edits during a loop of renames (another process's notes mv) never fail as busy: they land, or the title is gone")
    func editDuringMoves() throws {
        let runner = notes
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            for i in 0..<16 {
                _ = try? runner.run(["mv", i % 2 == 0 ? "Trip" : "Trip 2", i % 2 == 0 ? "Trip 2" : "Trip"])
            }
        }
        var landed: [String] = []
        for i in 0..<16 {
            let title = i % 2 == 0 ? "Trip" : "Trip 2"
            let result = try notes.run(["edit", title, "--append", "line \(i)"])
            #expect(result.status == 0 || result.status == 66, "edit \(i): exit \(result.status): \(result.stderr)")
            if result.status == 0 { landed.append("line \(i)") }
        }
        group.wait()
        let body = try notes.run(["show", "Trip"]).status == 0 ? try notes.ok(["show", "Trip"]) : try notes.ok(["show", "Trip 2"])
        for line in landed { #expect(body.contains(line), "\(line) was lost: \(body)") }
    }
}

/// The library made read-only: a read-only bind mount over it when run as root (which mode bits
/// don't stop), else its mode bits.
struct ReadOnlyView {
    let url: URL
    let mounted: Bool

    init(of url: URL) throws {
        self.url = url
        mounted = getuid() == 0
        if mounted {
            try Self.shell(["mount", "--bind", url.path, url.path])
            try Self.shell(["mount", "-o", "remount,bind,ro", url.path])
        } else {
            try Self.shell(["chmod", "-R", "a-w", url.path])
        }
    }

    func undo() {
        if mounted {
            _ = try? Self.shell(["umount", url.path])
        } else {
            _ = try? Self.shell(["chmod", "-R", "u+w", url.path])
        }
    }

    @discardableResult
    static func shell(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw CocoaError(.fileWriteUnknown) }
        return process.terminationStatus
    }
}
