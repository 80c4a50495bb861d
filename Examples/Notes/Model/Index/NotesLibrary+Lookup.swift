#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation

extension NotesLibrary {
    /// What a lookup of `title` found: a note that reads, or a package that doesn't (a damaged
    /// manifest, members that don't match it), with why.
    enum Lookup {
        case note(Entry)
        case unreadable(URL, DocumentKitError)
    }

    /// A note a lookup considered: where it is, its title and document identifier, and the
    /// document when the lookup opened it.
    struct Candidate {
        let url: URL
        let title: String
        let documentIdentifier: String
        let document: NoteDocument?
    }

    /// What ``resolve(_:opening:)`` found.
    enum Resolution {
        case note(Candidate)
        case unreadable(URL, DocumentKitError)
    }

    /// The note whose title is `title` (exactly, else ignoring case; a symbolic link to a note is
    /// that note), or whose package name is `title` (`Trip` → `trip.note`); else a package that
    /// can't be read with that package name or with that title in its manifest.
    func lookUp(_ title: String) async throws -> Lookup {
        switch try await resolve(title, opening: true) {
        case .note(let candidate):
            guard let document = candidate.document else { preconditionFailure("an opening lookup opens what it finds") }
            return .note(Entry(url: candidate.url, document: document))
        case .unreadable(let url, let error): return .unreadable(url, error)
        }
    }

    /// Where the note `title` names is (as ``lookUp(_:)`` finds it), without opening it when
    /// the index's entry of it, checked now, says it reads: for a command that opens it itself.
    func locate(_ title: String) async throws -> URL {
        switch try await resolve(title, opening: false) {
        case .note(let candidate): return candidate.url
        case .unreadable(_, let error): throw NotesError(error, note: title)
        }
    }

    /// Finds the note `title` names among candidates: with the index, the package named after
    /// the title, the package `title` names, and the notes the index lists under the title
    /// (exactly or ignoring case), after a look at the library's listing; if that finds nothing,
    /// again after a full refresh of the index. Without it, every note. A candidate is opened
    /// (with `opening`, or when the index doesn't say it reads) and what it says is the truth.
    func resolve(_ title: String, opening: Bool) async throws -> Resolution {
        guard index != nil else {
            // No index: read every note, as notes did before it had one.
            return try await resolve(title, among: try packageURLs(), opening: true, unreadable: nil)
        }
        try requireFolder()
        var checked: [String: Candidate] = [:]
        var failed: [String: DocumentKitError] = [:]
        for round in 0..<2 {
            if round == 1 {
                // A note whose save was cut off between the two renames of the fallback swap
                // exists only under hidden names until recovery completes it.
                do { try FileItem.completeInterruptedSaves(inFolderAt: url) } catch { warn("\(error)") }
                await refreshIndex(full: true)
            } else {
                await refreshIndex()
            }
            var (urls, vanished) = await candidateURLs(for: title)
            if vanished {
                // A note the index listed under the title is gone from its place: the index marked
                // its folder to be listed again (it may have been renamed, or copied meanwhile).
                await refreshIndex()
                urls = await candidateURLs(for: title).urls
            }
            // Counted only for the last round's "no such note" (after a full refresh: no extra cost).
            let unreadable = round == 1 ? await indexedNotes().filter { !Self.isReadable($0) }.count : 0
            if let found = try await resolve(
                title, among: urls, opening: opening, unreadable: unreadable, last: round == 1, checked: &checked, failed: &failed)
            {
                return found
            }
        }
        preconditionFailure("the last round of a lookup returns or throws")
    }

    /// The packages that may be the note `title`: the one named after it, and those the index
    /// lists under it, each checked now (its stamps; its manifest again if one changed); and
    /// whether one the index listed is gone.
    private func candidateURLs(for title: String) async -> (urls: [URL], vanished: Bool) {
        guard let index else { return ([], false) }
        var paths = [Self.packageName(for: title)]
        if !title.hasSuffix("." + NoteFormat.packageExtension) { paths.append(Self.slug(for: title) + "." + NoteFormat.packageExtension) }
        let listed = await index.entries(forKey: title) + index.entries(forKeyIgnoringCase: title)
        var vanished = false
        for entry in listed where Self.isNote(entry) {
            // A stale entry (retitled since) is read again here, and dropped if it no longer matches.
            guard let now = await index.revalidate(relativePath: entry.relativePath) else {
                vanished = true
                continue
            }
            if now.key?.lowercased() == title.lowercased() { paths.append(now.relativePath) }
        }
        var seen = Set<String>()
        let urls = paths.filter { seen.insert($0).inserted }.filter { Self.itemExists(url.appendingPathComponent($0)) }
            .map { url.appendingPathComponent($0, isDirectory: true) }
        return (urls, vanished)
    }

    /// ``resolve(_:opening:)`` among `urls`, without an index: a note that isn't found is an error.
    private func resolve(_ title: String, among urls: [URL], opening: Bool, unreadable: Int?) async throws -> Resolution {
        var checked: [String: Candidate] = [:]
        var failed: [String: DocumentKitError] = [:]
        guard let found = try await resolve(
            title, among: urls, opening: opening, unreadable: unreadable, last: true, checked: &checked, failed: &failed)
        else { preconditionFailure("the last round of a lookup returns or throws") }
        return found
    }

    /// One round of a lookup among `urls`: the rules of ``lookUp(_:)``; nil when nothing matched
    /// and this isn't the `last` round (which throws "no such note" then).
    private func resolve(
        _ title: String, among urls: [URL], opening: Bool, unreadable: Int?, last: Bool,
        checked: inout [String: Candidate], failed: inout [String: DocumentKitError]
    ) async throws -> Resolution? {
        for packageURL in urls where checked[packageURL.path] == nil && failed[packageURL.path] == nil {
            do throws(DocumentKitError) {
                checked[packageURL.path] = try await candidate(at: packageURL, opening: opening)
            } catch {
                failed[packageURL.path] = error
            }
        }
        let all = checked.values.sorted { $0.url.lastPathComponent < $1.url.lastPathComponent }
        let exact = all.filter { $0.title == title }
        let matches = exact.isEmpty ? all.filter { $0.title.lowercased() == title.lowercased() } : exact
        if matches.count == 1 { return .note(matches[0]) }
        // A symbolic link to a note in the library (an alias) is that note, not another with its title.
        let real = matches.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: $0.url.path)) == nil }
        if real.count == 1, Set(matches.map { $0.url.resolvingSymlinksInPath().path }).count == 1 { return .note(real[0]) }
        if matches.count > 1 { throw Self.ambiguity(title, matches) }
        let byName = Self.packageName(for: title)
        if let candidate = all.first(where: { $0.url.lastPathComponent == byName }) { return .note(candidate) }
        let failures = failed.sorted { $0.key < $1.key }
        if let failure = failures.first(where: { URL(fileURLWithPath: $0.key).lastPathComponent == byName })
            ?? failures.first(where: { Self.manifest(ofPackageAt: URL(fileURLWithPath: $0.key))?.additionalFields["title"]?.stringValue == title })
        {
            return .unreadable(URL(fileURLWithPath: failure.key, isDirectory: true), failure.value)
        }
        guard last else { return nil }
        let count = unreadable ?? failures.count
        let unread = count == 0 ? "" : " (\(count) of its notes could not be read: `notes check` says why)"
        throw NotesError(.noSuchNote, "“\(title)”: no such note in \(url.path)\(unread)")
    }

    /// The note at `packageURL` as a candidate: opened, or (unless `opening`) as the index's
    /// entry of it says when that entry, checked now, says it reads.
    private func candidate(at packageURL: URL, opening: Bool) async throws(DocumentKitError) -> Candidate {
        if adoptsConflictCopies { await adoptConflictCopies(names: [packageURL.lastPathComponent]) }
        if !opening, let index, let entry = await index.revalidate(relativePath: packageURL.lastPathComponent),
            Self.isReadable(entry), let key = entry.key, let identifier = entry.documentIdentifier
        {
            return Candidate(url: packageURL, title: key, documentIdentifier: identifier, document: nil)
        }
        // Where the note is read: it may have moved while the read waited.
        let document = try await open(packageURL)
        return Candidate(
            url: document.fileURL, title: document.content.title, documentIdentifier: document.content.documentIdentifier.uuidString,
            document: document)
    }

    /// Whether there is an item at `url` (a symbolic link counts, wherever it points).
    static func itemExists(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0
    }

    /// A note titled exactly `title` other than `excluded`, found through the index (see
    /// ``create(_:)``): the packages named after the title's slug (`trip.note`, `trip-2.note`, …)
    /// and those the index lists under the title, each opened. Nil if there is none.
    func existingNote(titled title: String, excluding excluded: URL? = nil) async -> URL? {
        guard index != nil else {
            // No index: read every note.
            let excludedPath = excluded?.standardizedFileURL.path
            return (try? await entries())?.first { $0.note.title == title && $0.url.standardizedFileURL.path != excludedPath }?.url
        }
        await refreshIndex()
        let base = Self.slug(for: title)
        var urls: [URL] = []
        var candidate = base
        var number = 2
        while Self.itemExists(url.appendingPathComponent(candidate + "." + NoteFormat.packageExtension)) {
            urls.append(url.appendingPathComponent(candidate + "." + NoteFormat.packageExtension, isDirectory: true))
            candidate = "\(base)-\(number)"
            number += 1
        }
        if let index {
            var vanished = false
            for entry in await index.entries(forKey: title) where Self.isNote(entry) {
                guard let now = await index.revalidate(relativePath: entry.relativePath) else {
                    vanished = true
                    continue
                }
                if now.key == title { urls.append(now.url) }
            }
            if vanished {
                // Gone from its place (renamed?): the index lists its folder again and looks once more.
                await refreshIndex()
                for entry in await index.entries(forKey: title) where Self.isNote(entry) {
                    if let now = await index.revalidate(relativePath: entry.relativePath), now.key == title { urls.append(now.url) }
                }
            }
        }
        var seen = Set<String>()
        for candidate in urls where seen.insert(candidate.standardizedFileURL.path).inserted {
            if let excluded, candidate.standardizedFileURL.path == excluded.standardizedFileURL.path { continue }
            if let document = try? await open(candidate), document.content.title == title { return document.fileURL }
        }
        return nil
    }
}
