import DocumentKit
import Foundation
import HTTPTypes

extension NotesAPI {
    /// The versions of the note `id`: the current one first, then the others newest first.
    func versions(of id: String, conflictsOnly: Bool = false) async throws -> [VersionResource] {
        let url = try await locate(id)
        await adoptConflictCopies(of: url)
        let library = library
        let listing = try await BlockingWork.run { try library.versions(of: url, title: id, reportingProblems: false) }
        var versions = (listing.current.map { [$0] } ?? []) + listing.others.sorted {
            ($0.modificationDate ?? .distantPast, $0.persistentIdentifier) > ($1.modificationDate ?? .distantPast, $1.persistentIdentifier)
        }
        if conflictsOnly { versions = versions.filter(\.isUnresolvedConflict) }
        return versions.map { resource(of: $0, noteID: id) }
    }

    /// Adopts the conflict copies a sync engine left inside the note at `url` as conflict
    /// versions, as the CLI does when it looks a note up: copies made inside a package while the
    /// server runs change nothing the library's watch sees.
    func adoptConflictCopies(of url: URL) async {
        if library.adoptsConflictCopies { await library.adoptConflictCopies(names: [url.lastPathComponent]) }
    }

    func resource(of version: FileVersion, noteID id: String) -> VersionResource {
        let summary = VersionSummary(version)
        let digest = version.isCurrent ? tag(at: version.itemURL) : library.store.contentDigest(ofItemAt: version.url).map(EntityTag.init)
        return VersionResource(
            id: summary.id, url: APIPath.version(summary.id, of: id), etag: digest?.description, date: summary.date,
            host: summary.host, user: summary.user, origin: summary.origin, conflict: summary.conflict, resolved: summary.resolved)
    }

    /// The version `version` of the note `id`, as a note (`current` for the note itself).
    func version(_ version: String, of id: String) async throws -> (NoteResource, EntityTag?) {
        let url = try await locate(id)
        let found = try library.version(version, of: url, title: id)
        if found.isCurrent { return try await note(id) }
        let document: NoteDocument
        do throws(DocumentKitError) { document = try await library.open(found) } catch { throw NotesError(error, note: id) }
        let tag = library.store.contentDigest(ofItemAt: found.url).map(EntityTag.init)
        let resource = resource(of: document, at: found.url, tag: tag)
        return (resource, tag)
    }

    /// Makes the note `version`'s contents again (`POST …/versions/{version}/restore`); the
    /// note as it was is kept as a version.
    func restore(_ version: String, of id: String, condition: EntityTag.Condition) async throws -> (NoteResource, EntityTag?) {
        let library = library
        try await write(id, opening: false) { place, _, current in
            _ = try Self.check(condition, current: current, id: id)
            let found = try library.version(version, of: place, title: id)
            guard !found.isCurrent else { return }
            _ = try await library.replace(place, title: id, with: found)
        }
        let result = try await note(id)
        await events.publish(.changed, note: result.0)
        return result
    }

    /// Settles the note's unresolved conflict versions (`POST …/conflicts/resolve`): keep the
    /// current note, keep a conflict version, or merge them.
    func resolve(_ id: String, condition: EntityTag.Condition, _ request: ResolveRequest) async throws -> (NoteResource, EntityTag?) {
        guard (request.keep == nil) != (request.merge != true) else {
            throw APIError.badRequest("give either `keep` (\"current\" or a conflict version's id) or `merge: true`")
        }
        let library = library
        try await write(id, opening: false) { place, _, current in
            _ = try Self.check(condition, current: current, id: id)
            let conflicts = try library.versions(of: place, title: id, reportingProblems: false).unresolvedConflicts
            if let keep = request.keep, keep != "current" {
                guard let chosen = conflicts.first(where: { $0.persistentIdentifier == keep }) else {
                    throw APIError(.conflict, "noSuchConflict", "note \(id) has no unresolved conflict version \(keep) (GET …/conflicts lists them)")
                }
                _ = try await library.resolve(place, title: id, keeping: chosen, among: conflicts)
            } else if request.merge == true {
                if !conflicts.isEmpty { _ = try await library.merge(place, title: id, conflicts: conflicts) }
            } else {
                for conflict in conflicts {
                    do throws(DocumentKitError) { try library.store.markResolved(conflict, as: .keptCurrent) } catch {
                        throw NotesError(error, note: id)
                    }
                }
            }
        }
        let result = try await note(id)
        await events.publish(.changed, note: result.0)
        return result
    }

    /// Exports the note `id` (or every note) as an archive in a temporary file, which the
    /// caller streams and removes.
    func export(_ id: String?, format: ArchiveFormat) async throws -> URL {
        let items: [URL]
        if let id { items = [try await locate(id)] } else { items = try library.packageURLs() }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("notes-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let archive = folder.appendingPathComponent("notes.\(format.fileExtension)")
        do throws(DocumentKitError) {
            _ = try await DocumentArchiver.export(
                itemsAt: items, to: archive, options: ArchiveExportOptions(format: format), coordinator: library.coordinator)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw NotesError(error, note: id ?? "")
        }
        return archive
    }
}
