import DocumentKit
import Foundation

/// A note as `list`, `conflicts` and `watch` show it: from the index's entry, or read when the
/// entry doesn't say it reads (without an index, every note is read).
struct ListedNote {
    let url: URL
    let title: String
    let documentIdentifier: String
    let modified: Date
    /// The unresolved conflict versions the index counted; nil when the note was read instead.
    let conflicts: Int?
}

extension NotesLibrary {
    /// Every note of the library, sorted by package name: from the index (brought up to date
    /// with a `stat` per note, conflict copies among what changed adopted), opening only the
    /// notes whose entry doesn't say they read. Notes that can't be read are reported through
    /// `problem`, with why.
    func listedNotes(problem: (URL, DocumentKitError) -> Void) async throws -> [ListedNote] {
        guard index != nil else {
            return try await entries(problem: problem).map {
                ListedNote(url: $0.url, title: $0.note.title, documentIdentifier: $0.note.documentIdentifier.uuidString, modified: $0.modified, conflicts: nil)
            }
        }
        try requireFolder()
        do { try FileItem.completeInterruptedSaves(inFolderAt: url) } catch { warn("\(error)") }
        await refreshIndex(full: true)
        var result: [ListedNote] = []
        for entry in await indexedNotes() {
            if Self.isReadable(entry), let key = entry.key, let identifier = entry.documentIdentifier {
                var conflicts = 0
                if case .unresolvedConflicts(let count) = entry.state { conflicts = count }
                result.append(ListedNote(
                    url: entry.url, title: key, documentIdentifier: UUID(uuidString: identifier)?.uuidString ?? identifier,
                    modified: entry.modificationDate ?? Date(timeIntervalSince1970: 0), conflicts: conflicts))
                continue
            }
            // The index says it doesn't read (damaged, incomplete, too new): open it, for the
            // reason in DocumentKit's words, or because this reader reads it after all.
            do {
                let document = try await open(entry.url)
                let read = Entry(url: document.fileURL, document: document)
                result.append(ListedNote(
                    url: read.url, title: read.note.title, documentIdentifier: read.note.documentIdentifier.uuidString,
                    modified: read.modified, conflicts: nil))
            } catch {
                problem(entry.url, error)
            }
        }
        return result
    }

    /// The notes whose version store may hold unresolved conflicts, by package name, with the
    /// title when the index knows it: those the index (brought up to date) counts conflicts of,
    /// and those it can't read (their store is looked at too). Without an index, every package.
    func notesThatMayHaveConflicts() async throws -> [(URL, String?)] {
        guard index != nil else { return try packageURLs().map { ($0, nil) } }
        try requireFolder()
        await refreshIndex(full: true)
        return await indexedNotes().compactMap { entry in
            switch entry.state {
            case .current: return nil
            case .unresolvedConflicts: return (entry.url, entry.key)
            case .incomplete, .tooNew, .damaged: return (entry.url, nil)
            }
        }
    }
}
