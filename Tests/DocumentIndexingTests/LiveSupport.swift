import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// What a subscriber of ``DocumentIndex/updates()`` knows: the entries built from the delivered
/// batches only, and every inconsistency between a batch and what came before it (an add of a
/// path already known, a removal or change of one not known, a lost or repeated batch).
actor LiveMirror {
    private(set) var entries: [String: IndexEntry] = [:]
    private(set) var batches: [IndexBatch] = []
    private(set) var inconsistencies: [String] = []
    private(set) var hasGathered = false
    private(set) var lastSequence: UInt64?
    private(set) var ending: String?
    private var indexID: UUID?

    /// Starts a task consuming `updates` into a new mirror.
    static func following(_ updates: IndexUpdates) -> (LiveMirror, Task<Void, Never>) {
        let mirror = LiveMirror()
        let task = Task {
            do throws(DocumentKitError) {
                for try await batch in updates { await mirror.apply(batch) }
                await mirror.end("finished")
            } catch {
                await mirror.end("threw: \(error)")
            }
        }
        return (mirror, task)
    }

    func end(_ how: String) { ending = how }

    func apply(_ batch: IndexBatch) {
        batches.append(batch)
        switch batch.kind {
        case .gathered, .reset:
            entries = [:]
            for entry in batch.added {
                if entries[entry.relativePath] != nil { inconsistencies.append("\(batch.kind) lists \(entry.relativePath) twice") }
                entries[entry.relativePath] = entry
            }
            hasGathered = true
            indexID = batch.indexID
            lastSequence = batch.sequence
        case .update:
            if !hasGathered { inconsistencies.append("update batch \(batch.sequence) before the gathering batch") }
            if batch.indexID != indexID { inconsistencies.append("update batch of index \(batch.indexID), not \(String(describing: indexID))") }
            if let lastSequence, batch.sequence != lastSequence + 1 {
                inconsistencies.append("update batch \(batch.sequence) after batch \(lastSequence)")
            }
            lastSequence = batch.sequence
            for entry in batch.removed {
                if entries.removeValue(forKey: entry.relativePath) == nil {
                    inconsistencies.append("batch \(batch.sequence) removes \(entry.relativePath), not known")
                }
            }
            for move in batch.moved {
                if entries.removeValue(forKey: move.from.relativePath) == nil {
                    inconsistencies.append("batch \(batch.sequence) moves \(move.from.relativePath), not known")
                }
                if move.from.documentIdentifier != move.to.documentIdentifier {
                    inconsistencies.append("batch \(batch.sequence) moves \(move.from.relativePath) → \(move.to.relativePath) across identifiers")
                }
            }
            for entry in batch.moved.map(\.to) + batch.added {
                if entries[entry.relativePath] != nil {
                    inconsistencies.append("batch \(batch.sequence) adds \(entry.relativePath), known already")
                }
                entries[entry.relativePath] = entry
            }
            for entry in batch.changed {
                if entries[entry.relativePath] == nil {
                    inconsistencies.append("batch \(batch.sequence) changes \(entry.relativePath), not known")
                }
                entries[entry.relativePath] = entry
            }
        }
    }

    /// The update batches delivered so far.
    var updateBatches: [IndexBatch] { batches.filter { $0.kind == .update } }
}

/// The differences between two sets of entries by relative path, in words; empty if they are equal.
func differences(_ left: [IndexEntry], _ right: [IndexEntry], _ leftName: String, _ rightName: String) -> [String] {
    differences(byPath(left), byPath(right), leftName, rightName)
}

/// ``differences(_:_:_:_:)`` of entries keyed by relative path.
func differences(_ left: [String: IndexEntry], _ right: [String: IndexEntry], _ leftName: String, _ rightName: String) -> [String] {
    var lines: [String] = []
    for path in Set(left.keys).union(right.keys).sorted() {
        switch (left[path], right[path]) {
        case let (l?, r?) where l != r:
            lines.append("\(path): \(leftName) \(describe(l)) ≠ \(rightName) \(describe(r))")
        case (nil, let r?): lines.append("\(path): only in \(rightName) \(describe(r))")
        case (let l?, nil): lines.append("\(path): only in \(leftName) \(describe(l))")
        default: break
        }
    }
    return lines
}

/// The entries by relative path (the last one wins if a path were listed twice).
func byPath(_ entries: [IndexEntry]) -> [String: IndexEntry] {
    Dictionary(entries.map { ($0.relativePath, $0) }, uniquingKeysWith: { _, last in last })
}

func describe(_ entry: IndexEntry) -> String {
    "[id \(entry.documentIdentifier ?? "nil"), key \(entry.key ?? "nil"), v\(entry.formatVersion.map(String.init) ?? "nil"), "
        + "\(entry.state), fields \(entry.fields.keys.sorted()), modified \(entry.modificationDate?.timeIntervalSince1970 ?? 0)]"
}


/// Waits, polling, until `condition` holds or `deadline` passes; whether it held. The deadline
/// is generous: it bounds a failing test, it is not a measure of speed.
func waitUntil(deadline: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return await condition()
}

/// A process run to completion: its exit status and output.
struct ProcessResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `executable` with `arguments` on a thread of its own (never blocking the cooperative pool).
func runProcess(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            do {
                let process = Process()
                process.executableURL = executable
                process.arguments = arguments
                var env = ProcessInfo.processInfo.environment
                env.removeValue(forKey: "NOTES_LIBRARY")
                for (key, value) in environment { env[key] = value }
                process.environment = env
                let out = Pipe()
                let err = Pipe()
                process.standardOutput = out
                process.standardError = err
                process.standardInput = FileHandle.nullDevice
                try process.run()
                // Both pipes are drained at once: a child filling one while we wait on the other would block.
                let group = DispatchGroup()
                let errData = DataBox()
                DispatchQueue.global().async(group: group) { errData.data = err.fileHandleForReading.readDataToEndOfFile() }
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: ProcessResult(
                        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                        stderr: String(decoding: errData.data, as: UTF8.self)))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// Data written by one thread and read by another after a `DispatchGroup.wait()`.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}

/// Runs `script` with `/bin/sh -c` in `folder`; expects it to succeed.
@discardableResult
func shell(_ script: String, in folder: URL, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ProcessResult {
    let result = try await runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "cd \"$0\" && " + script, folder.path])
    #expect(result.status == 0, "sh -c \(script) failed: \(result.stderr)", sourceLocation: sourceLocation)
    return result
}

/// The built `notes` executable, run as a user would on one library: a black-box writer.
struct LiveNotes: Sendable {
    let library: URL

    /// The `notes` binary built beside this test bundle.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("notes")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        fatalError("notes executable not found near the test bundle; build with `swift build --build-tests`")
    }()

    /// Runs `notes ARGUMENTS --library LIBRARY`; expects it to succeed and returns its output.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let result = try await runProcess(Self.executable, arguments + ["--library", library.path])
        #expect(result.status == 0, "notes \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)", sourceLocation: sourceLocation)
        return result.stdout
    }

    /// The configuration of an index of a notes library: format 3, keyed by title.
    static func indexConfiguration(of library: URL, cache: URL) -> DocumentIndex.Configuration {
        DocumentIndex.Configuration(
            folderURL: library, packageExtensions: ["note"], manifestName: "Info.json", formatIdentifier: "org.documentkit.notes",
            readerVersion: 3, keyField: "title", fields: ["title", "tags", "created"], cacheFolder: cache)
    }
}
