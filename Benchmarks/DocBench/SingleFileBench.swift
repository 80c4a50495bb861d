#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

/// A document stored as one zip file (`Document.archiveFormat`), of N members.
final class SingleFileBenchDocument: Document<[String: FileWrapper]>, @unchecked Sendable {
    static let benchFormat = FormatDescription(identifier: "org.documentkit.docbench.single-file", version: 1)
    override var format: FormatDescription? { Self.benchFormat }
    override var archiveFormat: ArchiveFormat? { .zip }

    override func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> [String: FileWrapper] {
        fileWrapper["members"]?.fileWrappers ?? [:]
    }

    override func fileWrapper(
        for content: [String: FileWrapper], manifest: inout DocumentManifest, replacing previous: FileWrapper?
    ) throws -> FileWrapper {
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        tree["members"] = FileWrapper(directoryWithFileWrappers: content)
        return tree
    }
}

/// Issue #15's single-file benchmark: the save of a zip document with one member changed
/// (unchanged members' compressed bytes copied) against a full rewrite of the same archive (every
/// member compressed again), by member count, in the same run.
struct SingleFileBench: Benchmark {
    let sizes: [Int]
    let memberSize: Int
    let rounds: Int
    let work: WorkDirectory

    struct Row {
        var members: Int
        var archiveBytes: Int64 = 0
        var open = Samples()
        var incremental = Samples()
        var rewrite = Samples()
    }

    /// Member `index`: half of it a pattern that compresses, half pseudo-random bytes.
    static func member(_ index: Int, size: Int, round: Int = 0) -> Data {
        var state = UInt64(index &* 2_654_435_761 &+ round &* 97 &+ 1)
        return Data((0..<size).map { offset in
            if offset < size / 2 { return UInt8(truncatingIfNeeded: offset &* 7 &+ index) }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        })
    }

    func run() throws -> [Row] {
        var rows: [Row] = []
        for count in sizes {
            progress("docbench single-file: \(count) members of \(memberSize) bytes")
            let folder = try work.makeSubdirectory("single-\(count)")
            let url = URL(fileURLWithPath: folder.path + "/Doc.zdoc")
            var content: [String: FileWrapper] = [:]
            for index in 0..<count {
                content[String(format: "m%06d.bin", index)] = FileWrapper(regularFileWithContents: Self.member(index, size: memberSize))
            }
            let initial = content
            try wait {
                let document = SingleFileBenchDocument(fileURL: url, content: initial)
                try await document.save(to: url, for: .saveAs)
                try await document.close()
            }
            var row = Row(members: count)
            row.archiveBytes = Int64((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
            let size = memberSize
            for round in 1...rounds {
                work.syncFileSystem()
                // Ours: open (the central directory), change one member, save.
                let changedMember = FileWrapper(regularFileWithContents: Self.member(0, size: size, round: round))
                let (opening, saving) = try wait { () async throws -> (UInt64, UInt64) in
                    let started = now()
                    let document = try await SingleFileBenchDocument.open(at: url)
                    let opened = now() - started
                    let changed = now()
                    try document.update { $0["m000000.bin"] = changedMember }
                    try await document.save()
                    let saved = now() - changed
                    try await document.close()
                    return (opened, saved)
                }
                row.open.append(opening)
                row.incremental.append(saving)
                work.syncFileSystem()
                // The baseline: the same archive written whole, every member compressed again
                // (the members in memory before the timing, as an app that rewrites holds them).
                let rewritten = URL(fileURLWithPath: folder.path + "/Rewrite.zdoc")
                var all = initial
                all["m000000.bin"] = changedMember
                let whole = all
                row.rewrite.append(try wait { () async throws -> UInt64 in
                    let document = SingleFileBenchDocument(fileURL: rewritten, content: whole)
                    let started = now()
                    try await document.save(to: rewritten, for: .saveAs)
                    let elapsed = now() - started
                    try await document.close()
                    return elapsed
                })
                try? FileManager.default.removeItem(at: rewritten)
            }
            rows.append(row)
        }
        return rows
    }

    /// Runs async work from this synchronous benchmark and returns its result.
    private func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = SingleFileOutcome<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { outcome.value = .success(try await body()) } catch { outcome.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try outcome.value!.get()
    }

    func markdown(_ rows: [Row]) -> String {
        var lines = [
            "### single-file: a zip document's save with one member changed, against a full rewrite (\(rounds) rounds, medians)",
            "",
            "| members × \(memberSize) B | archive | open (central directory) | save, one member changed | full rewrite | save / rewrite |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows {
            let ratio = Double(row.incremental.median) / Double(max(row.rewrite.median, 1))
            lines.append(
                "| \(row.members) | \(row.archiveBytes >> 10) KiB | \(formatDuration(row.open.median)) | \(formatDuration(row.incremental.median)) | "
                    + "\(formatDuration(row.rewrite.median)) | \(String(format: "%.2f", ratio))× |")
        }
        return lines.joined(separator: "\n")
    }
}

/// The result of one piece of async work, handed from its task to the waiting thread (the
/// semaphore orders the write before the read).
private final class SingleFileOutcome<T: Sendable>: @unchecked Sendable {
    var value: Swift.Result<T, any Error>?
}
