import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The document index against a real sync engine: a live ``DocumentIndex`` on side b of a
/// Syncthing pair (the project's harness, loopback only) while `notes` changes side a. What
/// Syncthing delivers appears in b's live index; a package it has delivered only in part (a
/// member b ignores, as a sync engine that has not got to it yet) is flagged incomplete, then
/// current once the member arrives.
///
/// Needs `syncthing` (`Scripts/bootstrap.sh test`); `DOCUMENTKIT_SKIP_SYNCTHING=1` skips it.
@Suite(
    "Notes index over Syncthing", .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: !SyncthingPair.isOptedOut,
        "DOCUMENTKIT_SKIP_SYNCTHING=1 switches off the tests against a real Syncthing pair"))
struct NotesIndexSyncthingTests {
    /// Ports of their own: this suite's pair may run while the conflict tests' pair does.
    static let ports = SyncthingPair.Ports(sync: [.a: 22211, .b: 22212], rest: [.a: 8595, .b: 8596])

    @Test("notes created, edited, renamed and deleted on side a appear in side b's live index; a half-synced package is flagged incomplete, then current")
    func liveIndexFollowsSyncthing() async throws {
        let directory = try TemporaryDirectory(prefix: "notes-index-syncthing")
        let cache = try TemporaryDirectory(prefix: "notes-index-syncthing-cache")
        let pair = try await offPool { Unchecked(try SyncthingPair.start(in: directory.url, ports: Self.ports)) }
        defer { pair.value.stop() }
        let a = NotesRunner(library: pair.value.aDir)
        let b = pair.value.bDir
        func notes(_ arguments: [String]) async throws {
            let result = try await offPool { try a.run(arguments) }
            #expect(result.status == 0, "notes \(arguments.joined(separator: " ")) on a failed: \(result.stderr)")
        }
        func waitSync() async throws { try await offPool { try pair.value.waitSync() } }

        let configuration = DocumentIndex.Configuration(
            folderURL: b, packageExtensions: ["note"], manifestName: "Info.json", formatIdentifier: "org.documentkit.notes",
            readerVersion: 3, keyField: "title", fields: ["title", "tags"], cacheFolder: cache.url)
        let index = try DocumentIndex(configuration)
        let mirror = IndexMirror()
        let consumer = Task {
            do throws(DocumentKitError) {
                for try await batch in index.updates() { await mirror.apply(batch) }
            } catch {
                await mirror.end("threw: \(error)")
            }
        }
        defer { consumer.cancel() }
        try #require(await eventually { await mirror.hasGathered }, "no gathering batch")
        func require(_ what: String, _ condition: @escaping @Sendable ([IndexEntry]) -> Bool) async throws {
            let held = await eventually(deadline: .seconds(60)) { condition(await mirror.entries) }
            let entries = await mirror.entries
            let pairStatus = held ? "" : ((try? await offPool { pair.value.status() }) ?? "")
            try #require(held, "b's live index never showed \(what): \(entries.map(describe))\n\(pairStatus)")
        }

        // Created on a.
        try await notes(["new", "Alpha", "--body", "first"])
        try await notes(["new", "Beta", "--tag", "one"])
        try await notes(["new", "Gamma"])
        try await waitSync()
        try await require("Alpha, Beta and Gamma, current") { entries in
            entries.compactMap(\.key).sorted() == ["Alpha", "Beta", "Gamma"] && entries.allSatisfy { $0.state == .current }
        }
        let created = await mirror.entries
        let alpha = try #require(created.first { $0.key == "Alpha" })
        let gamma = try #require(created.first { $0.key == "Gamma" })

        // Edited on a: a tag, and the body.
        try await notes(["edit", "Beta", "--tag", "two"])
        try await notes(["edit", "Alpha", "--append", "second"])
        try await waitSync()
        try await require("Beta's new tag and Alpha's new body") { entries in
            entries.contains { $0.key == "Beta" && $0.fields["tags"]?.jsonText.contains("two") == true && $0.state == .current }
                && entries.contains {
                    $0.documentIdentifier == alpha.documentIdentifier && $0.modificationDate != alpha.modificationDate && $0.state == .current
                }
        }

        // Renamed on a: Syncthing delivers a new package and deletes the old one.
        try await notes(["mv", "Gamma", "Delta"])
        try await waitSync()
        try await require("Gamma renamed Delta") { entries in
            entries.filter { $0.documentIdentifier == gamma.documentIdentifier }.map { [$0.relativePath, $0.key] }
                == [["delta.note", "Delta"]] && entries.allSatisfy { $0.key != "Gamma" }
        }

        // Syncthing sends no renames of folders: what b's index saw (for the record; either is right).
        let renamedAsMove = await mirror.sawMove(of: gamma.documentIdentifier)
        print("NotesIndexSyncthingTests: Syncthing's rename reached b's index as \(renamedAsMove ? "a move" : "an add and a removal")")

        // Deleted on a.
        try await notes(["rm", "Alpha"])
        try await waitSync()
        try await require("Alpha gone") { entries in !entries.contains { $0.documentIdentifier == alpha.documentIdentifier } }

        // Half-synced: b ignores the attachment (Syncthing has not got to it), so the package
        // arrives with a manifest listing a member that is not there.
        let ignore = b.appendingPathComponent(".stignore")
        try Data("big.bin\n".utf8).write(to: ignore)
        try await offPool { try pair.value.scan(.b) }
        let attachment = directory.url.appendingPathComponent("big.bin")
        try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: attachment)
        try await notes(["new", "Photo", "--body", "see the attachment"])
        try await notes(["attach", "Photo", attachment.path])
        try await offPool { try pair.value.scan(.a) }
        let photo = b.appendingPathComponent("photo.note")
        let delivered = await eventually(deadline: .seconds(60)) {
            let manifest = (try? String(contentsOf: photo.appendingPathComponent("Info.json"), encoding: .utf8)) ?? ""
            return manifest.contains("attachments/big.bin")
                && FileManager.default.fileExists(atPath: photo.appendingPathComponent("attachments.json").path)
        }
        try #require(delivered, "Syncthing did not deliver Photo's manifest to b: \(SyncthingPair.tree(b))")
        #expect(!FileManager.default.fileExists(atPath: photo.appendingPathComponent("attachments/big.bin").path))
        try await require("Photo incomplete") { entries in
            guard case .incomplete = entries.first(where: { $0.relativePath == "photo.note" })?.state else { return false }
            return true
        }

        // The member arrives: the package is complete.
        try FileManager.default.removeItem(at: ignore)
        try await offPool { try pair.value.scan(.b) }
        try await waitSync()
        try await require("Photo current") { entries in entries.first { $0.relativePath == "photo.note" }?.state == .current }

        // Whatever the order of deliveries, the live index ends equal to a fresh scan of b, and
        // so do the batches it delivered.
        try await index.sync()
        let entries = await index.entries
        let fresh = try await configuration.freshScan()
        #expect(entries == fresh, "index \(entries.map(describe)) ≠ fresh \(fresh.map(describe))")
        let sequence = await index.sequence
        #expect(await eventually { await mirror.lastSequence == sequence })
        let mirrored = await mirror.entries
        #expect(mirrored == fresh, "batches \(mirrored.map(describe)) ≠ fresh \(fresh.map(describe))")
        #expect(await mirror.inconsistencies == [])
        await index.close()
    }

}

/// The entries a subscriber of ``DocumentIndex/updates()`` knows from the delivered batches
/// alone, and every inconsistency between a batch and those before it.
private actor IndexMirror {
    private var byPath: [String: IndexEntry] = [:]
    private(set) var hasGathered = false
    private(set) var lastSequence: UInt64?
    private(set) var inconsistencies: [String] = []

    /// The entries, sorted by relative path.
    var entries: [IndexEntry] { byPath.values.sorted { $0.relativePath < $1.relativePath } }

    func end(_ how: String) { inconsistencies.append("the updates ended: \(how)") }

    /// Whether an update batch moved the document `identifier`.
    func sawMove(of identifier: String?) -> Bool { moves.contains(identifier) }
    private var moves: Set<String?> = []

    func apply(_ batch: IndexBatch) {
        if batch.kind != .update {
            byPath = Dictionary(batch.added.map { ($0.relativePath, $0) }, uniquingKeysWith: { _, last in last })
            hasGathered = true
            lastSequence = batch.sequence
            return
        }
        if let lastSequence, batch.sequence != lastSequence + 1 {
            inconsistencies.append("update batch \(batch.sequence) after batch \(lastSequence)")
        }
        lastSequence = batch.sequence
        for move in batch.moved { moves.insert(move.to.documentIdentifier) }
        for path in batch.removed.map(\.relativePath) + batch.moved.map(\.from.relativePath) where byPath.removeValue(forKey: path) == nil {
            inconsistencies.append("batch \(batch.sequence) removes or moves \(path), not known")
        }
        for entry in batch.moved.map(\.to) + batch.added {
            if byPath[entry.relativePath] != nil { inconsistencies.append("batch \(batch.sequence) adds \(entry.relativePath), known already") }
            byPath[entry.relativePath] = entry
        }
        for entry in batch.changed {
            if byPath[entry.relativePath] == nil { inconsistencies.append("batch \(batch.sequence) changes \(entry.relativePath), not known") }
            byPath[entry.relativePath] = entry
        }
    }
}

private func describe(_ entry: IndexEntry) -> String {
    "\(entry.relativePath) [id \(entry.documentIdentifier ?? "nil"), key \(entry.key ?? "nil"), \(entry.state)]"
}

/// A value used from one task at a time, handed to a thread of its own.
private final class Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs blocking `work` (a harness step, a process) on a thread of its own, not the cooperative pool.
private func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// Waits, polling, until `condition` holds or `deadline` passes; whether it held. The deadline
/// bounds a failing test; it measures nothing.
private func eventually(deadline: Duration = .seconds(20), _ condition: () async -> Bool) async -> Bool {
    let end = ContinuousClock.now + deadline
    while ContinuousClock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return await condition()
}
