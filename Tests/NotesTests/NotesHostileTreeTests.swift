#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Notes libraries holding unusual trees: very many attachments, a note nested absurdly deep.
@Suite struct NotesHostileTreeTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-hostile")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    @Test("attaching 500 files with names of many lengths keeps them all")
    func attachFiveHundredFiles() throws {
        try notes.ok(["new", "Trip"])
        let files = directory.appending("files")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: false)
        var paths: [String] = []
        for index in 0..<500 {
            let name = "file-\(index)-" + String(repeating: "x", count: index % 200) + ".bin"
            let url = files.appendingPathComponent(name)
            try Data(repeating: UInt8(index % 256), count: index * 3).write(to: url)
            paths.append(url.path)
        }
        let result = try notes.run(["attach", "Trip"] + paths)
        #expect(result.status == 0, "\(result.stderr.prefix(2_000))")
        let details = try #require(try notes.json(["show", "Trip", "--json"]) as? [String: Any])
        #expect((details["attachments"] as? [String])?.count == 500)
    }

    @Test("a note whose manifest another program replaced by a FIFO is reported at once; the other notes still list and show")
    func manifestReplacedByAFIFO() throws {
        try notes.ok(["new", "Good", "--body", "fine"])
        try notes.ok(["new", "Piped", "--body", "soon a pipe"])
        let manifest = notes.library.appendingPathComponent("piped.note/Info.json")
        try FileManager.default.removeItem(at: manifest)
        try #require(mkfifo(manifest.path, 0o600) == 0)
        // A command that waited on the FIFO for a writer would hang: `timeout` kills it (status 124).
        let bounded = ["/usr/bin/timeout", "30"]
        let list = try notes.run(["list"], launcher: bounded)
        #expect(list.status == 0 && list.stdout.contains("Good"), "\(list.status): \(list.stdout)\(list.stderr)")
        let check = try notes.run(["check"], launcher: bounded)
        #expect(check.status == 65 && check.stdout.contains("piped.note") && check.stdout.contains("fifo"), "\(check.status): \(check.stdout)")
        let piped = try notes.run(["show", "Piped"], launcher: bounded)
        #expect(piped.status == 65 && piped.stderr.contains("Info.json"), "\(piped.status): \(piped.stderr)")
        let good = try notes.run(["show", "Good"], launcher: bounded)
        #expect(good.status == 0 && good.stdout.contains("fine"), "\(good.status): \(good.stderr)")
    }

    @Test("a note nested 1,000 levels deep is reported as damaged; the other notes still list and show")
    func deeplyNestedNote() throws {
        try notes.ok(["new", "Good", "--body", "fine"])
        try notes.ok(["new", "Deep", "--body", "soon too deep"])
        // Each level made relative to the one before: the whole path is longer than PATH_MAX.
        var fd = open(notes.library.appendingPathComponent("deep.note").path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        for _ in 0..<1_000 {
            try #require(mkdirat(fd, "nested-folder", 0o755) == 0)
            let next = openat(fd, "nested-folder", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            close(fd)
            try #require(next >= 0)
            fd = next
        }
        close(fd)

        // `list` prints from the library's index, which reads manifests, not whole packages:
        // the note reading it opens, and `check`, say what is wrong with it.
        let list = try notes.run(["list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("Good"))
        let check = try notes.run(["check"])
        #expect(check.stdout.contains("deep.note") && check.stdout.contains("nested deeper than"), "\(check.stdout)")
        let deep = try notes.run(["show", "Deep"])
        #expect(deep.status == 65 && deep.stderr.contains("nested deeper than"), "\(deep.stderr)")
        let show = try notes.run(["show", "Good"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("fine"))
        let bad = try notes.run(["show", "Deep"])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("deep.note") && bad.stderr.contains("nested deeper than"))
        // Foundation can't remove a tree whose paths exceed PATH_MAX; DocumentKit can.
        try FileItem.remove(at: notes.library.appendingPathComponent("deep.note"))
    }
}
