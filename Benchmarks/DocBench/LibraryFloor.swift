#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

/// The floor of `notes list --json`: list the library folder (`opendir`/`readdir`) and read
/// every note's manifest (`openat`, `read` to the end, `close`); nothing parsed, nothing printed.
enum LibraryFloor {
    /// Lists `library` and reads every `*.note/Info.json`; returns the notes read and their bytes.
    static func readManifests(of library: String) throws -> (notes: Int, bytes: Int) {
        guard let directory = opendir(library) else {
            try check(-1, "opendir \(library)")
            return (0, 0)
        }
        defer { closedir(directory) }
        let folder = dirfd(directory)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { buffer.deallocate() }
        var notes = 0
        var bytes = 0
        while let entry = readdir(directory) {
            let done = try withUnsafePointer(to: &entry.pointee.d_name) { tuple throws -> Bool in
                try tuple.withMemoryRebound(to: CChar.self, capacity: 256) { name throws -> Bool in
                    let length = strlen(name)
                    guard name[0] != 0x2E, length > 5, strcmp(name + length - 5, ".note") == 0 else { return false }
                    let path = String(cString: name) + "/Info.json"
                    let fd = try check(openat(folder, path, O_RDONLY | O_CLOEXEC), "open \(library)/\(path)")
                    defer { close(fd) }
                    while true {
                        let count = read(fd, buffer, 65_536)
                        if count < 0 { try check(-1, "read \(library)/\(path)") }
                        if count <= 0 { break }
                        bytes += count
                    }
                    return true
                }
            }
            if done { notes += 1 }
        }
        return (notes, bytes)
    }

    /// The helper modes of docbench that `docbench library` spawns: `--noop` (a Swift process
    /// that does nothing), `--list-floor DIR` (``readManifests(of:)`` in a process of its own),
    /// `--rename-in DIR N` (a file renamed into DIR) and `--save-manifest PACKAGE N` (the package
    /// saved by DocumentKit with a new manifest); the last two print when they were done
    /// (`CLOCK_MONOTONIC`, ns). Returns only if `arguments` names none of them.
    static func helperMain(_ arguments: [String]) {
        guard arguments.count >= 2 else { return }
        switch arguments[1] {
        case "--noop":
            exit(0)
        case "--index-startup" where arguments.count >= 4:
            // For profiling: a new index of a library and its refresh, `ROUNDS` times (default 1).
            do {
                let configuration = LibraryIndexBench.configuration(arguments[2], cacheFolder: arguments[3])
                for round in 0..<(arguments.count >= 5 ? Int(arguments[4]) ?? 1 : 1) {
                    // As `docbench library` does: one note changed since the index was written.
                    try LibraryIndexBench.rewriteManifest(of: arguments[2] + "/" + LibraryFixture.packageName(round * 7919 % 100_000), round: round)
                    let heapBefore = LibraryIndexBench.heapInUse()
                    let (entries, elapsed, heap) = try blocking { () async throws -> (Int, UInt64, UInt64) in
                        let start = now()
                        let index = try DocumentIndex(configuration)
                        let batch = try await index.refresh()
                        let elapsed = now() - start
                        let heap = LibraryIndexBench.heapInUse()
                        await index.close()
                        return (batch.added.count + batch.changed.count, elapsed, heap)
                    }
                    print("heap growth \(Double(heap) - Double(heapBefore)) bytes")
                    let floorStart = now()
                    _ = try LibraryIndexBench.statFloor(arguments[2], reading: "bench-note-000000.note")
                    let floor = now() - floorStart
                    print("\(entries) added or changed: \(Double(elapsed) / 1e6) ms, floor \(Double(floor) / 1e6) ms, \(Double(elapsed) / Double(floor))×")
                }
                exit(0)
            } catch {
                helperFailed("--index-startup", "\(error)")
            }
        case "--list-floor" where arguments.count >= 3:
            do {
                let read = try readManifests(of: arguments[2])
                print("\(read.notes) \(read.bytes)")
                exit(0)
            } catch {
                helperFailed("--list-floor", "\(error)")
            }
        case "--rename-in" where arguments.count >= 4:
            let temporary = arguments[2] + "/.docbench-\(arguments[3])"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0, write(fd, arguments[3], arguments[3].utf8.count) >= 0, close(fd) == 0 else {
                helperFailed("--rename-in", "errno \(errno)")
            }
            // The time just before the rename: a watcher can hear it before this process prints.
            let renaming = now()
            guard rename(temporary, arguments[2] + "/file-\(arguments[3])") == 0 else { helperFailed("--rename-in", "errno \(errno)") }
            print(renaming)
            exit(0)
        case "--save-manifest" where arguments.count >= 4:
            do {
                let url = URL(fileURLWithPath: arguments[2])
                var tree = try FileWrapper(contentsOf: url)
                let manifest = try String(contentsOf: url.appendingPathComponent(NoteMembers.manifest), encoding: .utf8)
                let stamped = try LibraryFloor.stampCreated(manifest, round: Int(arguments[3]) ?? 0)
                tree[NoteMembers.manifest] = FileWrapper(regularFileWithContents: Data(stamped.utf8))
                _ = try tree.write(to: url)
                print(now())
                exit(0)
            } catch {
                helperFailed("--save-manifest", "\(error)")
            }
        default:
            return
        }
    }

    private static func helperFailed(_ mode: String, _ message: String) -> Never {
        FileHandle.standardError.write(Data("docbench \(mode): \(message)\n".utf8))
        exit(70)
    }

    /// `text` (a manifest) with its `created` date replaced by one that encodes `round`: the
    /// same length, so the manifest stays valid.
    static func stampCreated(_ text: String, round: Int) throws -> String {
        guard let range = text.range(of: #""created" : "[^"]*""#, options: .regularExpression) else {
            throw BenchError(description: "a manifest without `created`")
        }
        let stamp = String(format: "2027-%02d-%02dT%02d:%02d:00Z", 1 + round % 12, 1 + round % 28, (round / 28) % 24, round % 60)
        return text.replacingCharacters(in: range, with: "\"created\" : \"\(stamp)\"")
    }
}
