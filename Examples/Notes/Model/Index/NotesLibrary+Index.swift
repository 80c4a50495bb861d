import DocumentKit
import Foundation

/// The library's document index: how commands find notes without opening every one.
///
/// The index (DocumentKit's `DocumentIndex`) only finds: every note a command uses is opened,
/// and that read is the truth; an index entry whose title no longer matches is read again, never
/// trusted. `NOTES_INDEX=off` turns it off (every command reads every note, as before the index);
/// `$NOTES_INDEX_CACHE` names the folder it is kept in (default: the user's cache folder).
extension NotesLibrary {
    /// The index of the library at `url` for a reader of `readerVersion`; nil when
    /// `NOTES_INDEX=off` or the library folder isn't there (the commands then say so).
    ///
    /// An index that isn't `persistent` lives in this process only: a command that adopts no
    /// conflict copies uses one, so that what changed since the last command stays new for the
    /// next command that adopts them (copies are adopted among what the index finds changed).
    static func makeIndex(of url: URL, readerVersion: Int, persistent: Bool = true) -> DocumentIndex? {
        let environment = ProcessInfo.processInfo.environment
        if environment["NOTES_INDEX"]?.lowercased() == "off" { return nil }
        let cache = environment["NOTES_INDEX_CACHE"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
        let configuration = DocumentIndex.Configuration(
            folderURL: url, packageExtensions: [NoteFormat.packageExtension], manifestName: NoteFormat.manifestName,
            formatIdentifier: NoteFormat.identifier, readerVersion: readerVersion, keyField: "title",
            fields: ["title", "created", "tags"], cacheFolder: cache, isPersistent: persistent)
        return try? DocumentIndex(configuration)
    }

    /// Whether an index entry is a note of the library (a package in the library folder itself,
    /// not in a subfolder).
    static func isNote(_ entry: IndexEntry) -> Bool {
        !entry.relativePath.contains("/") && !entry.relativePath.hasPrefix(".")
    }

    /// Whether an entry's manifest says the note opens (its members are there with their sizes).
    static func isReadable(_ entry: IndexEntry) -> Bool {
        switch entry.state {
        case .current, .unresolvedConflicts: return entry.key != nil && entry.documentIdentifier != nil
        case .incomplete, .tooNew, .damaged: return false
        }
    }

    /// The notes the index lists, by package name.
    func indexedNotes() async -> [IndexEntry] {
        guard let index else { return [] }
        return await index.entries.filter(Self.isNote)
    }

    /// Brings the index's listing up to date (or the whole index with `full`: a `stat` per note),
    /// then adopts the sync engines' conflict copies among what changed. Problems are warnings:
    /// a command goes on with what the index has.
    @discardableResult
    func refreshIndex(full: Bool = false) async -> IndexBatch? {
        guard let index else { return nil }
        let batch: IndexBatch
        do throws(DocumentKitError) {
            batch = full ? try await index.refresh() : try await index.refreshListing()
        } catch {
            warn("warning: the notes index could not be brought up to date: \(error)")
            return nil
        }
        if adoptsConflictCopies {
            let touched = (batch.added + batch.changed + batch.moved.map(\.to)).filter(Self.isNote).map(\.relativePath)
            // A copy a sync engine made of a whole note is a package of its own: adopted as it
            // appears (a look at the listing), or wherever it is on a full look.
            var copies = touched.filter { ConflictCopyName(parsing: $0) != nil }
            if full {
                // Every note is a name of the library folder: its listing has the copies the index
                // lists and those it doesn't (not named `.note`: `trip.note.conflict1`).
                let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                copies += names.filter { !$0.hasPrefix(".") && ConflictCopyName(parsing: $0) != nil }
            }
            await adoptConflictCopies(names: touched + copies)
        }
        return batch
    }

    /// Adopts the conflict copies among the library items `names` (a copy of a whole note, or
    /// copies of members inside a note), saying so on stderr, and tells the index.
    func adoptConflictCopies(names: [String]) async {
        guard !names.isEmpty else { return }
        let adopted = store.adoptConflictCopies(in: url, names: names)
        report(adopted)
        guard index != nil, !adopted.isEmpty else { return }
        await noteChanges(at: names.map { url.appendingPathComponent($0, isDirectory: true) } + adopted.map(\.itemURL))
    }

    /// Tells the index that this process changed the notes at `urls` (saved, moved, removed).
    /// With the `mark` taken before the change (``markListing(for:)``), the library's listing
    /// stays current: the next command finds its note without listing the library again.
    func noteChanges(at urls: [URL], since mark: ListingMark? = nil) async {
        guard let index else { return }
        await index.noteChanges(at: relativePaths(urls), since: mark)
    }

    /// A look at the library just before this process changes the notes at `urls`: for
    /// ``noteChanges(at:since:)`` afterwards. Nil without an index.
    func markListing(for urls: [URL]) async -> ListingMark? {
        guard let index else { return nil }
        return await index.markListing(forChangesAt: relativePaths(urls))
    }

    /// The paths of `urls` relative to the library (those outside it left out).
    private func relativePaths(_ urls: [URL]) -> [String] {
        let base = url.standardizedFileURL.path + "/"
        return urls.map(\.standardizedFileURL.path).filter { $0.hasPrefix(base) }.map { String($0.dropFirst(base.count)) }
    }
}
