#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import Foundation
import Synchronization

/// The `DocumentIndex` measures of the library benchmark (issue #14, measures 3 to 5), in
/// docbench's own process:
///
/// - start-up on the largest library with one note changed since the index was written: a new
///   `DocumentIndex` and its `refresh()`, against the floor of a `stat` of every manifest (after a
///   `readdir` of the library) and one manifest read;
/// - the live update: another process saves a note (a DocumentKit package save that changes its
///   manifest) and prints the time its save returned; the time until the index's `updates()`
///   delivers the batch, against the floor of a raw inotify watch seeing a rename made the same way
///   by another process;
/// - the index's memory per entry after `refresh()` (heap in use from `mallinfo2`, and resident
///   memory from `/proc/self/statm`).
struct LibraryIndexBench {
    struct Result {
        let size: Int
        var startup = Samples()
        var startupFloor = Samples()
        var changedReported = 0
        var liveSize = 0
        var live = Samples()
        var liveFloor = Samples()
        var heapPerEntry = 0.0
        var residentPerEntry = 0.0
        var entries = 0
    }

    let iterations: Int
    let work: WorkDirectory
    let docbench: ChildProcess

    /// The configuration docbench's indexes use: notes' packages, kept in `cacheFolder`.
    static func configuration(_ library: String, cacheFolder: String) -> DocumentIndex.Configuration {
        var configuration = DocumentIndex.Configuration(
            folderURL: URL(fileURLWithPath: library), packageExtensions: ["note"], manifestName: NoteMembers.manifest)
        configuration.formatIdentifier = "org.documentkit.notes"
        configuration.readerVersion = 3
        configuration.keyField = "title"
        configuration.fields = ["title", "created", "tags"]
        configuration.cacheFolder = URL(fileURLWithPath: cacheFolder)
        return configuration
    }

    /// Start-up and memory on `large`, the live update on `live`.
    func run(large: String, largeSize: Int, live: String, liveSize: Int) throws -> Result {
        var result = Result(size: largeSize)
        let cacheFolder = work.path + "/index-cache"
        let configuration = Self.configuration(large, cacheFolder: cacheFolder)

        progress("docbench library: building the index of \(largeSize) notes (untimed)")
        try blocking {
            let index = try DocumentIndex(configuration)
            try await index.refresh()
            await index.close()
        }

        // Memory, then start-up: each round changes one note, then starts an index on it.
        for round in 0..<iterations {
            let changed = LibraryFixture.packageName((round * 7919) % largeSize)
            try Self.rewriteManifest(of: large + "/" + changed, round: round)
            work.syncFileSystem()
            var floorNotes = 0
            let floorStart = now()
            floorNotes = try Self.statFloor(large, reading: changed)
            result.startupFloor.append(now() - floorStart)
            // The library holds the generated notes plus those `notes new` made in the rounds before.
            guard floorNotes >= largeSize else { throw BenchError(description: "the floor saw \(floorNotes) of \(largeSize) notes") }

            let heapBefore = Self.heapInUse()
            let residentBefore = Self.residentBytes()
            let outcome = try blocking { () async throws -> (UInt64, Int, Int, UInt64, UInt64) in
                let start = now()
                let index = try DocumentIndex(configuration)
                let batch = try await index.refresh()
                let elapsed = now() - start
                let heap = Self.heapInUse()
                let resident = Self.residentBytes()
                let count = await index.entries.count
                await index.close()
                return (elapsed, batch.changed.count + batch.added.count + batch.removed.count + batch.moved.count, count, heap, resident)
            }
            result.startup.append(outcome.0)
            result.changedReported = outcome.1
            if round == 0 {
                result.entries = outcome.2
                result.heapPerEntry = Double(Int64(bitPattern: outcome.3 &- heapBefore)) / Double(max(outcome.2, 1))
                result.residentPerEntry = Double(Int64(bitPattern: outcome.4 &- residentBefore)) / Double(max(outcome.2, 1))
            }
            progress("docbench library: index start-up \(formatDuration(outcome.0)), floor \(formatDuration(result.startupFloor.values.last!))")
        }

        try measureLive(library: live, size: liveSize, cacheFolder: cacheFolder, into: &result)
        return result
    }

    // MARK: Live updates

    private func measureLive(library: String, size: Int, cacheFolder: String, into result: inout Result) throws {
        result.liveSize = size
        let rounds = max(iterations, 11)
        // Floor: a raw inotify watch on a folder, another process renames a file into it.
        let folder = work.path + "/inotify-floor"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let inotify = inotify_init1(Int32(IN_CLOEXEC))
        guard inotify >= 0, inotify_add_watch(inotify, folder, UInt32(IN_MOVED_TO)) >= 0 else {
            throw BenchError(description: "inotify: errno \(errno)")
        }
        let heard = Mutex<UInt64?>(nil)
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(inotify, &buffer, buffer.count) > 0 { heard.withLock { $0 = now() } }
        }
        reader.start()
        defer { close(inotify) }

        let configuration = Self.configuration(library, cacheFolder: cacheFolder)
        let batchAt = Mutex<(count: Int, time: UInt64)>((0, 0))
        let gathered = Mutex(false)
        let failure = Mutex<String?>(nil)
        let index = try blocking { try DocumentIndex(configuration) }
        let listener = Task {
            do {
                for try await batch in index.updates() {
                    let time = now()
                    if case .gathered = batch.kind { gathered.withLock { $0 = true }; continue }
                    if !batch.isEmpty { batchAt.withLock { $0 = ($0.count + 1, time) } }
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        defer {
            listener.cancel()
            try? blocking { await index.close() }
        }
        let deadline = now() + 120_000_000_000
        while !gathered.withLock({ $0 }) {
            guard now() < deadline else { throw BenchError(description: "no gathering batch from the index within 120 s") }
            if let message = failure.withLock({ $0 }) { throw BenchError(description: "the index's updates ended: \(message)") }
            usleep(1_000)
        }
        usleep(200_000)
        progress("docbench library: live updates on \(size) notes, \(rounds) saves per variant")
        for round in 0..<rounds {
            // The floor.
            heard.withLock { $0 = nil }
            let renamed = try Self.timestamp(docbench.run(["--rename-in", folder, "\(round)"], captureOutput: true))
            result.liveFloor.append(try Self.wait(for: { heard.withLock { $0 } }, since: renamed))
            usleep(20_000)

            // The index.
            let before = batchAt.withLock { $0.count }
            let package = library + "/" + LibraryFixture.packageName((round * 31) % size)
            let saved = try Self.timestamp(docbench.run(["--save-manifest", package, "\(1_000 + round)"], captureOutput: true))
            let arrived = try Self.wait(
                for: { batchAt.withLock { $0.count > before ? $0.time : nil } }, since: saved, failure: { failure.withLock { $0 } })
            result.live.append(arrived)
            usleep(100_000)  // the next save starts after this batch's quiet period
        }
    }

    /// The time a helper printed (`CLOCK_MONOTONIC`, the same clock in every process).
    private static func timestamp(_ run: ChildRun) throws -> UInt64 {
        guard let time = UInt64(run.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError(description: "a helper printed “\(run.output)”, not a time")
        }
        return time
    }

    /// Waits for `heard` to give a time, and returns how long after `start` it is (0 if before).
    private static func wait(
        for heard: () -> UInt64?, since start: UInt64, failure: () -> String? = { nil }
    ) throws -> UInt64 {
        let deadline = now() + 10_000_000_000
        while now() < deadline {
            if let time = heard() { return time > start ? time - start : 0 }
            if let message = failure() { throw BenchError(description: "the index's updates ended: \(message)") }
            usleep(50)
        }
        throw BenchError(description: "no notice within 10 s")
    }

    // MARK: Floors and helpers

    /// `readdir` of the library, `fstatat` of every `*.note/Info.json`, and a read of the
    /// manifest of `changed`: the least a start-up that finds the one changed note can do.
    static func statFloor(_ library: String, reading changed: String) throws -> Int {
        guard let directory = opendir(library) else { try check(-1, "opendir \(library)"); return 0 }
        defer { closedir(directory) }
        let folder = dirfd(directory)
        var notes = 0
        var info = stat()
        while let entry = readdir(directory) {
            let isNote = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { name -> Bool in
                    let length = strlen(name)
                    guard name[0] != 0x2E, length > 5, strcmp(name + length - 5, ".note") == 0 else { return false }
                    return fstatat(folder, String(cString: name) + "/Info.json", &info, AT_SYMLINK_NOFOLLOW) == 0
                }
            }
            if isNote { notes += 1 }
        }
        let fd = try check(openat(folder, changed + "/Info.json", O_RDONLY | O_CLOEXEC), "open \(changed)/Info.json")
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while read(fd, &buffer, buffer.count) > 0 {}
        return notes
    }

    /// Replaces the manifest of the package at `path` with one whose `created` names `round`
    /// (a new file renamed over the old one: another file identity, the same size).
    static func rewriteManifest(of path: String, round: Int) throws {
        let manifest = path + "/" + NoteMembers.manifest
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        let changed = try LibraryFloor.stampCreated(text, round: round)
        let temporary = path + "/.docbench-manifest"
        try Data(changed.utf8).write(to: URL(fileURLWithPath: temporary))
        try check(rename(temporary, manifest), "rename \(temporary)")
    }

    /// Bytes of heap in use (`mallinfo2`: small blocks plus mapped ones).
    static func heapInUse() -> UInt64 {
        UInt64(dk_heap_in_use())
    }

    /// Resident memory of this process (`/proc/self/statm`, second field, in pages).
    static func residentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    // MARK: Report

    func markdown(_ result: Result) -> String {
        let startupRatio = ratio(result.startup.median, result.startupFloor.median)
        let liveFloor = result.liveFloor.median
        let liveExtra = result.live.median > liveFloor ? result.live.median - liveFloor : 0
        let perEntry = result.heapPerEntry
        return [
            "### `DocumentIndex`: start-up, live updates, memory",
            "",
            "Start-up: \(LibraryBench.count(result.size)) notes, one manifest replaced since the index was written; a new "
                + "`DocumentIndex` and its `refresh()` (which reported \(result.changedReported) change(s)), against `readdir` + "
                + "`fstatat` of every manifest + one manifest read, in this process. Live: another process "
                + "(`docbench --save-manifest`) saves a note of the \(LibraryBench.count(result.liveSize))-note library with "
                + "DocumentKit (a new manifest, the body hard-linked, the swap) and prints when its save returned; the time "
                + "until `updates()` delivers the batch, against a raw inotify watch (a thread blocked in `read`) seeing "
                + "another process's rename (`docbench --rename-in`, timed just before its `rename`).",
            "",
            "| measure | median | p90 | floor (median) | × floor |",
            "|---|---|---|---|---|",
            "| index start-up, one changed | \(formatDuration(result.startup.median)) | \(formatDuration(result.startup.p90)) | \(formatDuration(result.startupFloor.median)) | \(formatRatio(result.startup.median, result.startupFloor.median)) |",
            "| save → update batch | \(formatDuration(result.live.median)) | \(formatDuration(result.live.p90)) | \(formatDuration(liveFloor)) | \(formatRatio(result.live.median, liveFloor)) |",
            "",
            "Memory after `refresh()` of \(LibraryBench.count(result.size)) notes (\(LibraryBench.count(result.entries)) entries): "
                + String(format: "%.0f bytes of heap and %.0f bytes resident per entry", result.heapPerEntry, result.residentPerEntry) + ".",
            "",
            "| measure | value | goal | |",
            "|---|---|---|---|",
            "| index start-up, \(LibraryBench.count(result.size)) notes, one changed, vs floor | \(String(format: "%.2f×", startupRatio)) | ≤ 1.5× | \(startupRatio <= 1.5 ? "met" : "not met") |",
            "| save → batch, minus the watcher's latency | \(formatDuration(liveExtra)) | ≤ 5 ms | \(liveExtra <= 5_000_000 ? "met" : "not met") |",
            "| index memory per entry (heap) | \(String(format: "%.0f B", perEntry)) | ≤ 400 B | \(perEntry <= 400 ? "met" : "not met") |",
        ].joined(separator: "\n")
    }
}



/// Runs `body` to completion from synchronous code (the benchmarks are synchronous).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Swift.Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value: Swift.Result<T, any Error>
        do { value = .success(try await body()) } catch { value = .failure(error) }
        outcome.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
