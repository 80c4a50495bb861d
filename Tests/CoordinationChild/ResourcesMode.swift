#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation
import RaceTestSupport

/// What the process holds now: open descriptors, threads, inotify watches (read from `/proc`).
struct ProcessResources: CustomStringConvertible {
    var descriptors = 0
    var threads = 0
    var watches = 0

    static var now: ProcessResources {
        var resources = ProcessResources()
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        resources.descriptors = fds.count
        resources.threads = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                target == "anon_inode:inotify",
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + fd, encoding: .utf8)
            else { continue }
            resources.watches += info.split(separator: "\n").filter { $0.hasPrefix("inotify") }.count
        }
        return resources
    }

    var description: String { "\(descriptors) \(threads) \(watches)" }
}

/// The `resources` mode (see the header of main.swift): `count` presenting notes in `folders`
/// folders of `library`, opened, saved all at once, closed; the process's resources printed at
/// each step as `measure STEP FDS THREADS WATCHES`.
func measureResources(library: URL, count: Int, folders: Int, coordinator: FileCoordinator) async {
    let options = SaveOptions(durability: .consistent)
    let urls = (0..<count).map { index in
        library.appendingPathComponent("f\(index % max(folders, 1))").appendingPathComponent("n\(index).note")
    }
    do {
        for folder in Set(urls.map { $0.deletingLastPathComponent() }) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // Made without a coordinator (one note, copied): the files exist before anything is measured.
        let template = library.appendingPathComponent("template.note")
        try await RaceNoteDocument(fileURL: template, content: "0", saveOptions: options).save()
        for url in urls { try FileManager.default.copyItem(at: template, to: url) }
    } catch {
        fail("resources: making the notes: \(error)", status: 3)
    }
    say("measure base \(ProcessResources.now)")
    var documents: [RaceNoteDocument] = []
    documents.reserveCapacity(count)
    do {
        documents = try await withThrowingTaskGroup(of: RaceNoteDocument.self) { group in
            var opened: [RaceNoteDocument] = []
            for (index, url) in urls.enumerated() {
                if index >= 32, let document = try await group.next() { opened.append(document) }
                group.addTask {
                    let document = RaceNoteDocument(fileURL: url, saveOptions: options, coordinator: coordinator)
                    document.autosavePolicy = nil
                    try await document.open()
                    return document
                }
            }
            for try await document in group { opened.append(document) }
            return opened
        }
    } catch {
        fail("resources: opening the notes: \(error)", status: 3)
    }
    say("measure opened \(ProcessResources.now)")
    let peak = PeakSampler()
    do {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for document in documents {
                group.addTask {
                    try document.update { $0 = "1" }
                    try await document.save()
                }
            }
            try await group.waitForAll()
        }
    } catch {
        fail("resources: saving: \(error)", status: 3)
    }
    say("measure saving \(peak.stop())")
    say("measure saved \(ProcessResources.now)")
    do {
        for document in documents { try await document.close() }
    } catch {
        fail("resources: closing: \(error)", status: 3)
    }
    documents = []
    // Threads a pool started end after a while (GCD's idle threads after a few seconds).
    try? await Task.sleep(for: .milliseconds(200))
    say("measure closed \(ProcessResources.now)")
    coordinator.namespace.close()
    try? await Task.sleep(for: .milliseconds(200))
    say("measure shut \(ProcessResources.now)")
}

/// Samples the process's resources on a thread of its own until stopped; the highest seen.
final class PeakSampler: @unchecked Sendable {
    // @unchecked: `peak` and `running` are guarded by `lock`.
    private let lock = NSLock()
    private var peak = ProcessResources()
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = ProcessResources.now
                lock.withLock {
                    peak.descriptors = max(peak.descriptors, now.descriptors)
                    peak.threads = max(peak.threads, now.threads)
                    peak.watches = max(peak.watches, now.watches)
                }
                usleep(50_000)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops sampling; the peak (the sampler's own thread counted).
    func stop() -> ProcessResources {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peak }
    }
}
