import DocumentKit
import Foundation
import ServiceLifecycle
import Synchronization

/// Feeds the library's changes into the ``EventHub``: the index's update batches (every note
/// added, removed, changed or moved, by this process or any other, coordinated or not), each
/// note with its tag now. The index is live (its own watches of the library folder and of the
/// packages, and a periodic sweep): nothing here looks at files.
/// Also sends the hub's heartbeats.
struct LibraryWatcher: Service {
    let api: NotesAPI
    /// How often subscribers get a heartbeat.
    let heartbeat: Duration

    func run() async throws {
        let hub = api.events
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: heartbeat)
                    await hub.heartbeat()
                }
            }
            if let index = api.library.index {
                group.addTask {
                    do { try await follow(index) } catch is CancellationError {} catch { await poll(index, after: error) }
                }
            }
            // Returns at shutdown (or when cancelled): either way the feed ends.
            try? await gracefulShutdown()
            await hub.finishAll()
            group.cancelAll()
        }
    }

    /// Publishes the notes in the index's batches until cancelled.
    private func follow(_ index: DocumentIndex) async throws {
        let library = api.library
        var batches = index.updates().makeAsyncIterator()
        // The gathering batch: the notes as they are now, the feed's starting state.
        if let first = try await batches.next() {
            for entry in first.added where NotesLibrary.isNote(entry) {
                if let id = Self.identifier(entry) { await api.events.assume(id: id, etag: api.tag(at: entry.url)?.description) }
            }
            // Copies of members a sync engine left in the notes while no `notes` ran become conflict
            // versions, as the CLI's first look makes them (copies of whole notes are left as they are).
            let notes = first.added.filter { NotesLibrary.isNote($0) && ConflictCopyName(parsing: $0.relativePath) == nil }
            if library.adoptsConflictCopies { await library.adoptConflictCopies(names: notes.map(\.relativePath)) }
        }
        while let batch = try await batches.next() {
            await publish(batch)
        }
    }

    func publish(_ batch: IndexBatch) async {
        let hub = api.events
        for entry in batch.removed where NotesLibrary.isNote(entry) {
            guard let id = Self.identifier(entry) else { continue }
            // A copy sharing the id went (`rm -rf` of a `cp -r`, an adopted conflict copy): the note is still there.
            if let left = await package(stillHolding: id, after: entry) {
                // A sync engine's copy that went was most likely kept as a conflict version: counted again,
                // once that is done (it moves the copy into the store first, under a write of the note).
                let conflicts = ConflictCopyName(parsing: entry.relativePath) != nil ? await api.coordinatedConflictCount(at: left) : nil
                await hub.publish(.changed, id: id, title: entry.key, etag: api.tag(at: left)?.description, conflicts: conflicts)
            } else {
                await hub.publishDeletion(id: id, title: entry.key)
            }
        }
        for move in batch.moved {
            if NotesLibrary.isNote(move.from), !NotesLibrary.isNote(move.to), let id = Self.identifier(move.from) {
                await hub.publishDeletion(id: id, title: move.from.key)
            }
        }
        let touched = batch.added.map { ($0, EventHub.Kind.created) } + batch.changed.map { ($0, .changed) }
            + batch.moved.map { ($0.to, NotesLibrary.isNote($0.from) ? EventHub.Kind.changed : .created) }
        for (entry, kind) in touched where NotesLibrary.isNote(entry) && ConflictCopyName(parsing: entry.relativePath) == nil {
            guard let id = Self.identifier(entry) else { continue }
            let (url, title) = await shown(id, changedAt: entry)
            let etag = api.tag(at: url)?.description
            // Conflicts are counted for a new state only (this server's own writes come back here, already published).
            let conflicts = await hub.isNew(id: id, etag: etag) ? api.conflictCount(at: url) : nil
            await hub.publish(kind, id: id, title: title, etag: etag, conflicts: conflicts)
        }
    }

    /// A note's id as the API gives it: its document identifier, upper-case.
    static func identifier(_ entry: IndexEntry) -> String? {
        entry.documentIdentifier.map { UUID(uuidString: $0)?.uuidString ?? $0 }
    }
}
