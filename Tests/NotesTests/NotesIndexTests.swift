import DocumentKitTesting
import Foundation
import Testing

/// `notes` on the library's document index: a command about one note reads only that note,
/// and a stale index never gives a wrong answer.
@Suite struct NotesIndexTests {
    let directory: TemporaryDirectory
    let notes: NotesRunner

    init() throws {
        directory = try TemporaryDirectory(prefix: "notes-index")
        notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
    }

    /// Makes `count` notes `Note 0` … quickly: one made by `notes new`, the others copies of it
    /// given a title and a document identifier of their own in their manifests.
    func makeNotes(_ count: Int) throws {
        let first = URL(fileURLWithPath: try notes.ok(["new", "Note 0", "--body", "body 0"]).trimmingCharacters(in: .newlines))
        for number in 1..<count {
            let copy = notes.library.appendingPathComponent("note-\(number).note")
            try FileManager.default.copyItem(at: first, to: copy)
            try retitle(copy, to: "Note \(number)", newIdentifier: true)
        }
    }

    /// Edits the manifest of the package at `package` by hand: a new title (and identifier).
    func retitle(_ package: URL, to title: String, newIdentifier: Bool = false) throws {
        let manifest = package.appendingPathComponent("Info.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifest)) as? [String: Any])
        object["title"] = title
        if newIdentifier { object["documentIdentifier"] = UUID().uuidString }
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: manifest)
    }

    /// The lines `strace -f -qq OPTIONS` wrote while `notes ARGS` ran on the library.
    func straceLines(_ options: [String], _ arguments: [String]) throws -> [Substring] {
        let trace = directory.appending("trace-\(UUID().uuidString).txt")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        process.arguments = ["-f", "-qq"] + options + ["-o", trace.path, NotesRunner.executable.path]
            + arguments + ["--library", notes.library.path]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTES_INDEX_CACHE"] = NotesRunner.indexCache(of: notes.library).path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "notes \(arguments) under strace failed")
        return try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
    }

    /// The text between the first `open` and `close` in `line`, if any.
    private func between(_ open: Character, _ close: Character, in line: Substring) -> String? {
        guard let start = line.firstIndex(of: open), let end = line[line.index(after: start)...].firstIndex(of: close) else { return nil }
        return String(line[line.index(after: start)..<end])
    }

    /// The files under the library that `notes ARGS` opened, as strace saw them.
    func openedFiles(_ arguments: [String]) throws -> [String] {
        try straceLines(["-e", "trace=open,openat"], arguments).compactMap { between("\"", "\"", in: $0) }
    }

    @Test(
        "show and edit of one note open no other note's members",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func namedCommandReadsOneNote() throws {
        try makeNotes(30)
        try notes.ok(["list"])
        for arguments in [["show", "Note 7"], ["edit", "Note 7", "--append", "more"], ["show", "note-7.note"]] {
            // Opening a note opens its package by name, relative to the library folder
            // (`openat(library, "note-7.note", O_NOFOLLOW…)`), then its members inside it.
            let opened = try openedFiles(arguments)
            #expect(opened.contains("note-7.note"), "the trace shows the note's own open: \(opened.count) opens")
            let others = opened.filter { $0.hasPrefix("note-") && $0.hasSuffix(".note") && $0 != "note-7.note" }
            #expect(others.isEmpty, "notes \(arguments.joined(separator: " ")) opened other notes: \(others.prefix(5))")
        }
        #expect(try notes.ok(["show", "Note 7"]) == "body 0\nmore\n")
    }

    @Test("show, edit and new of other notes work beside damaged, missing and looping ones, and list lists the others")
    func brokenNotesBreakNothingElse() throws {
        try makeNotes(4)
        let library = notes.library
        try Data("{ not json".utf8).write(to: library.appendingPathComponent("note-1.note/Info.json"))
        let body = try FileManager.default.contentsOfDirectory(atPath: library.appendingPathComponent("note-2.note").path)
            .first { $0.hasPrefix("body") }
        try FileManager.default.removeItem(at: library.appendingPathComponent("note-2.note/\(try #require(body))"))
        try FileManager.default.createSymbolicLink(atPath: library.appendingPathComponent("loop.note").path, withDestinationPath: "loop.note")
        #expect(try notes.ok(["show", "Note 3"]) == "body 0\n")
        try notes.ok(["edit", "Note 3", "--append", "x"])
        try notes.ok(["new", "Fresh"])
        let list = try notes.run(["list", "--json"])
        let titles = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]).compactMap { $0["title"] as? String }
        #expect(titles == ["Fresh", "Note 0", "Note 3"])
        #expect(list.stderr.contains("note-1.note") && list.stderr.contains("note-2.note"))
    }

    /// The folders `notes ARGS` read the names of (`getdents64`), as strace saw them.
    func listedFolders(_ arguments: [String]) throws -> [String] {
        Set(try straceLines(["-y", "-e", "trace=getdents64"], arguments).compactMap { between("<", ">", in: $0) }).sorted()
    }

    /// Whether `notes ARGS` read the library folder's names each of `times` runs. A run in a large
    /// folder may pass over it for litter of crashed saves (one open or save in 64, see
    /// `LeftoverCleaner`): a command that never lists it otherwise lists it in all three runs
    /// with a chance of about 1 in 30,000.
    func listsLibraryEveryTime(_ arguments: [String], times: Int = 3) throws -> Bool {
        let library = notes.library.resolvingSymlinksInPath().path
        for _ in 0..<times where try !listedFolders(arguments).contains(library) { return false }
        return true
    }

    @Test("after notes' own edit, new, mv and rm, show and edit of a large library list no folder; a shell copy is still found")
    func ownChangesKeepTheListing() throws {
        try makeNotes(20)
        // Past one block of names (about 100 entries; 3,000 here): a folder a read or save doesn't sweep every time.
        for number in 0..<3_000 {
            #expect(FileManager.default.createFile(atPath: notes.library.appendingPathComponent("padding-file-\(number).txt").path, contents: nil))
        }
        try notes.ok(["list"])
        try notes.ok(["edit", "Note 3", "--append", "x"])
        #expect(try !listsLibraryEveryTime(["show", "Note 7"]))
        try notes.ok(["new", "Fresh"])
        #expect(try !listsLibraryEveryTime(["edit", "Note 7", "--append", "y"]))
        try notes.ok(["mv", "Note 5", "Renamed"])
        try notes.ok(["rm", "Note 6"])
        #expect(try !listsLibraryEveryTime(["show", "Renamed"]))
        #expect(try notes.run(["show", "Note 6"]).status == 66)
        // The shell's copy changes the folder behind notes' back: the next lookup lists and finds it.
        try FileManager.default.copyItem(
            at: notes.library.appendingPathComponent("note-7.note"), to: notes.library.appendingPathComponent("copy.note"))
        let ambiguous = try notes.run(["show", "Note 7"])
        #expect(ambiguous.status == 65)
        #expect(ambiguous.stderr.contains("2 notes have this title"))
    }

    @Test("edits of different notes by four processes at once, and a cp -r by the shell among them: the copy is found")
    func concurrentEditsAndShellCopy() async throws {
        try makeNotes(12)
        try notes.ok(["list"])
        let runner = notes
        let library = notes.library
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<6 {
                        let result = try runner.run(["edit", "Note \(worker + 1)", "--append", "w\(worker) r\(round)"])
                        #expect(result.status == 0, "\(result.stderr)")
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(150))
                try FileManager.default.copyItem(
                    at: library.appendingPathComponent("note-9.note"), to: library.appendingPathComponent("shell-copy.note"))
            }
            try await group.waitForAll()
        }
        // Whatever the saves around it accounted for, the copy is seen: the lookup is ambiguous.
        let ambiguous = try notes.run(["show", "Note 9"])
        #expect(ambiguous.status == 65, "\(ambiguous.stderr)")
        for worker in 0..<4 {
            let body = try notes.ok(["show", "Note \(worker + 1)"])
            for round in 0..<6 { #expect(body.contains("w\(worker) r\(round)")) }
        }
    }

    @Test("a stale index (mv, a hand-edited title, rm -rf, cp -a in the shell) gives the right answers")
    func staleIndex() throws {
        for title in ["Alpha", "Beta", "Gamma"] { try notes.ok(["new", title, "--body", title.lowercased()]) }
        try notes.ok(["list"])  // the index knows the three
        let library = notes.library
        try FileManager.default.moveItem(at: library.appendingPathComponent("alpha.note"), to: library.appendingPathComponent("zz.note"))
        try retitle(library.appendingPathComponent("beta.note"), to: "Bravo")
        try FileManager.default.removeItem(at: library.appendingPathComponent("gamma.note"))
        #expect(try notes.ok(["show", "Alpha"]) == "alpha\n")
        #expect(try notes.ok(["show", "Bravo"]) == "beta\n")
        // Its package is still named beta.note: the old title names it by its package.
        #expect(try notes.ok(["show", "Beta"]) == "beta\n")
        #expect(try notes.run(["show", "Gamma"]).status == 66)
        let titles = try #require(try notes.json(["list", "--json"]) as? [[String: Any]]).compactMap { $0["title"] as? String }
        #expect(titles == ["Alpha", "Bravo"])
        try FileManager.default.copyItem(at: library.appendingPathComponent("zz.note"), to: library.appendingPathComponent("alpha-copy.note"))
        let ambiguous = try notes.run(["show", "Alpha"])
        #expect(ambiguous.status == 65)
        #expect(ambiguous.stderr.contains("2 notes have this title") && ambiguous.stderr.contains("share its document identifier"))
    }

    @Test("new refuses a title that exists under another package name (renamed in the shell)")
    func newRefusesRenamedTitle() throws {
        try notes.ok(["new", "Trip"])
        try notes.ok(["list"])
        try FileManager.default.moveItem(
            at: notes.library.appendingPathComponent("trip.note"), to: notes.library.appendingPathComponent("holiday.note"))
        let again = try notes.run(["new", "Trip"])
        #expect(again.status == 73)
        #expect(again.stderr.contains("holiday.note"))
        #expect(!FileManager.default.fileExists(atPath: notes.library.appendingPathComponent("trip.note").path))
    }

    @Test("an attachment removed in the shell: list, from the index, no longer lists the note as whole, and says why")
    func attachmentRemovedInTheShell() throws {
        try notes.ok(["new", "Trip", "--body", "x"])
        try notes.ok(["new", "Other"])
        let photo = directory.appending("photo.jpg")
        try Data(repeating: 7, count: 1_000).write(to: photo)
        try notes.ok(["attach", "Trip", photo.path])
        let before = try notes.run(["list", "--json"])
        #expect(before.status == 0 && before.stderr.isEmpty)
        // Neither the package folder nor its manifest changes: only the folder `attachments` does.
        try FileManager.default.removeItem(at: notes.library.appendingPathComponent("trip.note/attachments/photo.jpg"))
        let after = try notes.run(["list", "--json"])
        let titles = try #require(try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]])
            .compactMap { $0["title"] as? String }
        #expect(titles == ["Other"], "listed: \(titles)")
        #expect(after.stderr.contains("trip.note") && after.stderr.contains("photo.jpg"), "\(after.stderr)")
    }

    @Test("NOTES_INDEX=off gives the same answers")
    func indexOff() throws {
        try makeNotes(5)
        try notes.ok(["edit", "Note 2", "--append", "two"])
        // A note's modification date is its manifest's, with the index or without: here the
        // package folder's own time is a day later than the manifest's.
        let manifest = notes.library.appendingPathComponent("note-3.note/Info.json")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -86_400)], ofItemAtPath: manifest.path)
        let off = ["NOTES_INDEX": "off"]
        let withIndex = try notes.run(["list", "--json"])
        let without = try notes.run(["list", "--json"], environment: off)
        #expect(withIndex.status == 0 && without.status == 0)
        #expect(withIndex.stdout == without.stdout, "with the index:\n\(withIndex.stdout)\nwithout:\n\(without.stdout)")
        #expect(try notes.run(["show", "note 2"], environment: off).stdout == (try notes.ok(["show", "note 2"])))
        #expect(try notes.run(["new", "Note 4"], environment: off).status == 73)
        #expect(try notes.run(["new", "Note 4"]).status == 73)
    }

    @Test("a damaged index cache (garbage over its files) is no error: the commands answer right")
    func damagedIndexCache() throws {
        try makeNotes(3)
        try notes.ok(["list"])
        let cache = NotesRunner.indexCache(of: notes.library)
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        var files = (FileManager.default.enumerator(atPath: cache.path)?.allObjects as? [String] ?? [])
            .map { cache.appendingPathComponent($0) }.filter { !$0.hasDirectoryPath && (try? $0.checkResourceIsReachable()) == true }
        if files.isEmpty { files = [cache.appendingPathComponent("index.sqlite")] }
        for file in files { try Data(repeating: 0xA5, count: 4096).write(to: file) }
        #expect(try notes.ok(["show", "Note 1"]) == "body 0\n")
        let titles = try #require(try notes.json(["list", "--json"]) as? [[String: Any]]).compactMap { $0["title"] as? String }
        #expect(titles == ["Note 0", "Note 1", "Note 2"])
    }

    @Test("list after 5 renames in other processes shows the new titles")
    func listAfterEditsElsewhere() throws {
        try makeNotes(5)
        try notes.ok(["list"])
        let queue = DispatchQueue(label: "renames", attributes: .concurrent)
        let group = DispatchGroup()
        let runner = notes
        for number in 0..<5 {
            queue.async(group: group) { _ = try? runner.run(["mv", "Note \(number)", "Renamed \(number)"]) }
        }
        group.wait()
        let titles = try #require(try notes.json(["list", "--json"]) as? [[String: Any]]).compactMap { $0["title"] as? String }
        #expect(titles == (0..<5).map { "Renamed \($0)" })
    }
}
