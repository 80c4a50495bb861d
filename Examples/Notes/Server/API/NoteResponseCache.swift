import DocumentKit
import Foundation
import Synchronization

/// The bodies of `GET /api/notes/{id}`, kept while the note's files are as they were: a GET
/// whose note is unchanged costs a `stat` of each of the note's files and of its folder in the
/// version store, not a coordinated read, a read of every member and a listing of its versions.
///
/// A response is kept only when the note's stamp (the identities — device, inode, size,
/// modification time — of the package and of everything in it, and of its folder in the version
/// store) was the same before and after it was read; any change to any file of the note, by
/// this process or another, coordinated or not, changes the stamp and the next GET reads it
/// again; so do a new version in the store (its folder there changes) and a conflict version
/// marked resolved (its record changes).
final class NoteResponseCache: Sendable {
    struct Entry: Sendable {
        let stamp: String
        let url: URL
        /// The records of the note's unresolved conflict versions: one resolved (by any process)
        /// changes its record, and with it the stamp.
        let conflictRecords: [String]
        let body: Data
        let tag: EntityTag?
        let conflicts: Int
    }

    private struct State {
        var entries = KeptInOrder<Entry>()
        var bytes = 0
    }

    private let state = Mutex(State())
    /// At most this many responses, and this many bytes of them, are kept.
    let capacity: Int
    let byteLimit: Int

    init(capacity: Int = 4096, byteLimit: Int = 64 << 20) {
        self.capacity = capacity
        self.byteLimit = byteLimit
    }

    /// The response kept for `id`, if its note still has the stamp it was kept with.
    func response(for id: String, stamp: (URL, [String]) -> String?) -> Entry? {
        guard let entry = state.withLock({ $0.entries[id] }) else { return nil }
        guard let now = stamp(entry.url, entry.conflictRecords), now == entry.stamp else {
            remove(id)
            return nil
        }
        return entry
    }

    func keep(_ entry: Entry, for id: String) {
        guard entry.body.count <= byteLimit / 16 else { return }
        state.withLock { state in
            if let old = state.entries.keep(entry, for: id) { state.bytes -= old.body.count }
            state.bytes += entry.body.count
            while state.entries.count > capacity || state.bytes > byteLimit, let gone = state.entries.removeOldest() {
                state.bytes -= gone.body.count
            }
        }
    }

    func remove(_ id: String) {
        state.withLock { state in
            if let gone = state.entries.remove(id) { state.bytes -= gone.body.count }
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

extension NotesAPI {
    /// The stamp of the note `id` at `url`: its files' identities, its version-store folder's,
    /// and those of the records of its unresolved conflict versions (`conflictRecords`).
    func stamp(of url: URL, id: String, conflictRecords: [String]) -> String? {
        guard let members = ItemState.ofItem(at: url, includingMembers: true)?.members else { return nil }
        let folder = library.store.url.appendingPathComponent("documents")
            .appendingPathComponent(VersionStore.documentFolderName(forIdentifier: id))
        var parts = [members]
        for path in [folder.path] + conflictRecords {
            var info = stat()
            parts.append(lstat(path, &info) == 0 ? "\(info.st_ino)|\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)|\(info.st_size)" : "-")
        }
        return parts.joined(separator: "\n")
    }

    /// The unresolved conflict versions of the note at `url`: counted first (no version's record
    /// is read or kept when unchanged), listed only when there are some.
    func unresolvedConflicts(at url: URL) -> [FileVersion] {
        if conflictCount(at: url) == 0 { return [] }
        return (try? library.store.versions(ofItemAt: url).unresolvedConflicts) ?? []
    }

    /// The body of `GET /api/notes/{id}` and the note's tag: kept, or read and kept.
    func noteResponse(_ id: String) async throws -> NoteResponseCache.Entry {
        let canonical = UUID(uuidString: id)?.uuidString ?? id
        if let kept = responses.response(for: canonical, stamp: { stamp(of: $0, id: canonical, conflictRecords: $1) }) { return kept }
        let url = try await locate(id)
        return try await library.coordinator.coordinate(with: [.readingIntent(with: url)]) { granted in
            let place = granted[0].url
            let conflicts = unresolvedConflicts(at: place)
            let records = conflicts.map { $0.url.deletingLastPathComponent().appendingPathComponent("record.json").path }
            let before = stamp(of: place, id: canonical, conflictRecords: records)
            let tag = tag(at: place)
            let document: NoteDocument
            do throws(DocumentKitError) { document = try await library.open(place) } catch { throw NotesError(error, note: id) }
            guard document.content.documentIdentifier.uuidString == canonical else { throw APIError.noSuchNote(id) }
            // No manifest to tag it when it was read: the note was away from its place (a shell's `mv` there and back).
            guard let tag else { throw APIError.noSuchNote(id) }
            let resource = resource(of: document, at: place, tag: tag, conflicts: conflicts)
            let entry = NoteResponseCache.Entry(
                stamp: before ?? "", url: place, conflictRecords: records, body: try JSONCoding.encoder.encode(resource), tag: tag,
                conflicts: resource.conflicts)
            // Kept only if nothing changed while it was read: the stamp, and the conflicts it was taken with.
            if let before, before == stamp(of: place, id: canonical, conflictRecords: records),
                unresolvedConflicts(at: place).map(\.persistentIdentifier) == conflicts.map(\.persistentIdentifier)
            {
                responses.keep(entry, for: canonical)
            }
            return entry
        }
    }
}
