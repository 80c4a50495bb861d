import DocumentKitSystem
import DocumentKitTesting
@testable import FileVersions
import Foundation
import SystemPackage
import Testing

/// `WatchedFolderNames`: the names of a store's document folder kept by inotify must be, at each
/// answer, what a listing gives then, whoever changed the folder, without listing it again.
@Suite("Watched folder names")
struct WatchedFolderNamesTests {
    /// The folder's names and inode numbers as a listing gives them now.
    func listing(_ path: String) throws -> [String: UInt64] {
        let fd = try FileSystem.live.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = try? FileSystem.live.close(fd, name: path) }
        return Dictionary(uniqueKeysWithValues: try FileSystem.live.inodesOfDirectory(fd, name: path).map { ($0.name, $0.inode) })
    }

    /// Asks for the folder a first time (answered nil: the caller lists it, a folder asked once is
    /// not watched) and then again (watched and listed).
    func watch(_ names: WatchedFolderNames, _ path: String) -> [String: UInt64]? {
        #expect(answer(names, path) == nil, "asked for once: the caller lists it")
        return answer(names, path)
    }

    func answer(_ names: WatchedFolderNames, _ path: String) -> [String: UInt64]? {
        names.entries(ofFolderAt: path, using: .live)
    }

    /// Runs `script` in `/bin/sh` in `folder`: another process's changes.
    func shell(_ script: String, in folder: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        try process.run()
        return process
    }

    @Test("names made, renamed, replaced and removed by this process and by another one are answered as a listing gives them, without a second listing")
    func namesFollowEveryChange() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path
        for index in 0..<5 { try FileManager.default.createDirectory(atPath: path + "/v\(index)", withIntermediateDirectories: false) }
        let names = WatchedFolderNames()
        #expect(try watch(names, path) == listing(path))
        // This process: a folder made, one renamed, one replaced by a rename over it, one removed.
        try FileManager.default.createDirectory(atPath: path + "/.new-a", withIntermediateDirectories: false)
        #expect(rename(path + "/.new-a", path + "/v5") == 0)
        try FileManager.default.createDirectory(atPath: path + "/.new-b", withIntermediateDirectories: false)
        #expect(rename(path + "/.new-b", path + "/v0") == 0)
        try FileManager.default.removeItem(atPath: path + "/v1")
        #expect(try answer(names, path) == listing(path))
        // Another process, and no pause between its last change and the answer.
        let other = try shell("mkdir w1 w2 && mv -T w1 v2 && mv w2 v9 && rmdir v3 && touch file && ln file link && mv link v4.state-x", in: path)
        other.waitUntilExit()
        #expect(other.terminationStatus == 0)
        #expect(try answer(names, path) == listing(path))
        // Two names exchanged in one step (`renameat2(RENAME_EXCHANGE)`): both are still there.
        let fd = try FileSystem.live.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
        defer { _ = try? FileSystem.live.close(fd, name: path) }
        try FileSystem.live.exchange("v4", in: fd, with: "v5", in: fd)
        #expect(try answer(names, path) == listing(path))
        #expect(names.counts == (folders: 1, listings: 1))
    }

    @Test("another process changing the folder all the while: every answer after it stopped is the listing, and the folder was listed once")
    func answersStayExactUnderAnotherWriter() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path
        let names = WatchedFolderNames()
        #expect(try watch(names, path) == listing(path))
        let script = """
            i=0; while [ $i -lt 400 ]; do
              mkdir .new-$i && mv -T .new-$i v$((i % 37)) 2>/dev/null || rm -rf .new-$i
              [ $((i % 5)) -eq 0 ] && rm -rf v$((i % 11))
              i=$((i + 1)); done
            """
        let other = try shell(script, in: path)
        var answers = 0
        while other.isRunning {
            #expect(answer(names, path) != nil)
            answers += 1
        }
        #expect(other.terminationStatus == 0)
        #expect(try answer(names, path) == listing(path))
        #expect(try !listing(path).isEmpty)
        #expect(answers > 0)
        #expect(names.counts.listings == 1)
    }

    @Test("a folder replaced at its path, or removed, is not answered from the old one's names")
    func aReplacedFolderIsListedAgain() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path + "/KEY"
        try FileManager.default.createDirectory(atPath: path + "/old", withIntermediateDirectories: true)
        let names = WatchedFolderNames()
        #expect(try watch(names, path) == listing(path))
        #expect(rename(path, folder.url.path + "/moved") == 0)
        try FileManager.default.createDirectory(atPath: path + "/new", withIntermediateDirectories: true)
        #expect(try watch(names, path) == listing(path), "the new folder is asked for anew")
        #expect(try listing(path).keys.sorted() == ["new"])
        #expect(names.counts.listings == 2)
        try FileManager.default.removeItem(atPath: path)
        #expect(answer(names, path) == nil)
        #expect(names.counts.folders == 0)
    }

    @Test("at most `limit` folders are watched: the least recently asked is dropped, and listed again when asked")
    func watchesAreBounded() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let paths = try (0..<3).map { index in
            let path = folder.url.path + "/KEY\(index)"
            try FileManager.default.createDirectory(atPath: path + "/v", withIntermediateDirectories: true)
            return path
        }
        let names = WatchedFolderNames(limit: 2)
        for path in paths { #expect(try watch(names, path) == listing(path)) }
        #expect(names.counts == (folders: 2, listings: 3))
        #expect(try answer(names, paths[2]) == listing(paths[2]))
        #expect(names.counts.listings == 3, "the most recent folder is still watched")
        #expect(try watch(names, paths[0]) == listing(paths[0]), "the first one was dropped")
        #expect(names.counts.listings == 4)
        // A scan asking once for each of more folders than it remembers (2 × limit) watches none of them.
        let scan = WatchedFolderNames(limit: 1)
        for _ in 0..<2 {
            for path in paths + [folder.url.path] { #expect(answer(scan, path) == nil) }
        }
        #expect(scan.counts == (folders: 0, listings: 0))
    }

    @Test("without inotify, through a file system that injects faults, or for a folder of too many names, the caller lists")
    func theCallerListsWhenNothingIsKept() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path
        for index in 0..<3 { try FileManager.default.createDirectory(atPath: path + "/v\(index)", withIntermediateDirectories: false) }
        // Each asked for twice: a first ask is always answered nil.
        let withoutInstance = WatchedFolderNames(faults: .init(initialization: .tooManyOpenFiles))
        let withoutWatches = WatchedFolderNames(faults: .init(addWatch: .noSpace))
        for names in [withoutInstance, withoutWatches] {
            #expect(answer(names, path) == nil)
            #expect(answer(names, path) == nil)
            #expect(names.counts == (folders: 0, listings: 0))
        }
        let faults = FaultInjector()
        let throughFaults = WatchedFolderNames()
        for _ in 0..<2 { #expect(throughFaults.entries(ofFolderAt: path, using: faults.fileSystem) == nil) }
        #expect(throughFaults.counts == (folders: 0, listings: 0))
        #expect(try watch(throughFaults, path) == listing(path), "the live file system is answered")
        let small = WatchedFolderNames(maximumNames: 2)
        #expect(try watch(small, path) == listing(path), "answered by its listing")
        #expect(small.counts.folders == 0, "but not kept")
    }

    /// The names `earlier` brought up to date by `changed` (an answer since a cursor).
    func applying(_ changed: [String: UInt64?], to earlier: [String: UInt64]) -> [String: UInt64] {
        var names = earlier
        for (name, inode) in changed { names[name] = inode }
        return names
    }

    @Test("an answer since an earlier one's cursor names every name changed since, by this process or another, and applied to the earlier names gives the listing")
    func changesSinceACursorGiveTheListing() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path
        for index in 0..<5 { try FileManager.default.createDirectory(atPath: path + "/v\(index)", withIntermediateDirectories: false) }
        let names = WatchedFolderNames()
        #expect(names.answer(ofFolderAt: path, using: .live, since: nil) == nil, "asked for once: the caller lists it")
        let first = try #require(names.answer(ofFolderAt: path, using: .live, since: nil))
        guard case .all(var known) = first.names else { Issue.record("a first answer gives every name"); return }
        #expect(try known == listing(path))
        var cursor = try #require(first.cursor)
        // Nothing changed: nothing named.
        let still = try #require(names.answer(ofFolderAt: path, using: .live, since: cursor))
        guard case .changed(let none) = still.names else { Issue.record("an answer since a cursor gives the changes"); return }
        #expect(none.isEmpty)
        // This process, then another one, then an exchange; each answer since the last cursor.
        try FileManager.default.createDirectory(atPath: path + "/.new-a", withIntermediateDirectories: false)
        #expect(rename(path + "/.new-a", path + "/v5") == 0)
        try FileManager.default.removeItem(atPath: path + "/v1")
        let steps: [() throws -> Void] = [
            {},
            {
                let other = try self.shell("mkdir w1 && mv -T w1 v2 && rmdir v3 && touch v4.state-x", in: path)
                other.waitUntilExit()
                #expect(other.terminationStatus == 0)
            },
            {
                let fd = try FileSystem.live.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)
                defer { _ = try? FileSystem.live.close(fd, name: path) }
                try FileSystem.live.exchange("v4", in: fd, with: "v5", in: fd)
            },
        ]
        for step in steps {
            try step()
            let next = try #require(names.answer(ofFolderAt: path, using: .live, since: cursor))
            guard case .changed(let changed) = next.names else { Issue.record("an answer since a cursor gives the changes"); return }
            #expect(!changed.isEmpty)
            known = applying(changed, to: known)
            #expect(try known == listing(path))
            cursor = try #require(next.cursor)
        }
        #expect(names.counts == (folders: 1, listings: 1))
    }

    @Test("a cursor from before the folder was listed again, or older than the changes kept, gets every name")
    func staleCursorsGetEveryName() throws {
        let folder = try TemporaryDirectory(prefix: "dk-watched")
        let path = folder.url.path + "/KEY"
        try FileManager.default.createDirectory(atPath: path + "/v0", withIntermediateDirectories: true)
        let names = WatchedFolderNames(logLimit: 4)
        _ = names.answer(ofFolderAt: path, using: .live, since: nil)
        let cursor = try #require(names.answer(ofFolderAt: path, using: .live, since: nil)?.cursor)
        // More changes than twice the kept ones, each looked at by an answer of its own.
        for index in 1...12 {
            try FileManager.default.createDirectory(atPath: path + "/v\(index)", withIntermediateDirectories: false)
            _ = names.answer(ofFolderAt: path, using: .live, since: nil)
        }
        guard case .all(let all)? = names.answer(ofFolderAt: path, using: .live, since: cursor)?.names else {
            Issue.record("a cursor older than the kept changes gets every name"); return
        }
        #expect(try all == listing(path))
        let recent = try #require(names.answer(ofFolderAt: path, using: .live, since: nil)?.cursor)
        // The folder replaced at its path: listed again, and an earlier cursor is of no use.
        #expect(rename(path, folder.url.path + "/moved") == 0)
        try FileManager.default.createDirectory(atPath: path + "/new", withIntermediateDirectories: true)
        _ = names.answer(ofFolderAt: path, using: .live, since: recent)
        guard case .all(let fresh)? = names.answer(ofFolderAt: path, using: .live, since: recent)?.names else {
            Issue.record("a cursor from before a new listing gets every name"); return
        }
        #expect(try fresh == listing(path))
        #expect(fresh.keys.sorted() == ["new"])
    }
}
