import DocumentKit
import Foundation

extension LibraryWatcher {
    /// The package that still holds the note `id` once `gone` went: a copy sharing its document
    /// identifier (`cp -r`, a sync engine's conflict copy, the original of a copy) keeps the note
    /// in the library, so the feed must not say it was deleted. Nil when no note has the id now.
    func package(stillHolding id: String, after gone: IndexEntry) async -> URL? {
        guard let index = api.library.index else { return nil }
        let candidates = await NotesAPI.entries(of: id, in: index)
        for candidate in candidates
        where NotesLibrary.isNote(candidate) && candidate.relativePath != gone.relativePath
            && ConflictCopyName(parsing: candidate.relativePath) == nil
        {
            if let now = await index.revalidate(relativePath: candidate.relativePath), Self.identifier(now) == id { return now.url }
        }
        return nil
    }
}

extension LibraryWatcher {
    /// The package and title the feed shows for the note `id` when `entry`, one of its packages,
    /// changed: `entry`'s own, unless a copy shares the id; then the package `GET /api/notes/{id}`
    /// reads, so that the feed never announces a tag the note doesn't have.
    func shown(_ id: String, changedAt entry: IndexEntry) async -> (url: URL, title: String?) {
        guard let index = api.library.index else { return (entry.url, entry.key) }
        let sharing = await NotesAPI.entries(of: id, in: index)
        guard Set(sharing.filter(NotesLibrary.isNote).map(\.relativePath)).count > 1, let url = try? await api.locate(id),
            url.standardizedFileURL.path != entry.url.standardizedFileURL.path
        else { return (entry.url, entry.key) }
        return (url, NotesLibrary.manifest(ofPackageAt: url)?.additionalFields["title"]?.stringValue ?? entry.key)
    }
}
