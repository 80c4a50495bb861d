import DocumentKit
import Foundation

/// One version in the JSON of `notes versions`, `notes conflicts` and `notes show --version`.
struct VersionSummary: Encodable {
    let id: String
    /// When the version's contents were last modified (ISO 8601), if known.
    let date: Date?
    /// The computer that made it, if known.
    let host: String?
    /// The user who made it, if known.
    let user: String?
    /// `current` for the note as it is now, else how the version came to be (`save`, `adoptedCopy`, …).
    let origin: String
    let conflict: Bool
    let resolved: Bool
    let discardable: Bool

    init(_ version: FileVersion) {
        id = version.persistentIdentifier
        date = version.modificationDate
        host = version.localizedNameOfSavingComputer
        user = version.savingUser
        origin = version.isCurrent ? "current" : version.origin?.rawValue ?? "unknown"
        conflict = version.isConflict
        resolved = version.isResolved
        discardable = version.isDiscardable
    }

    private enum CodingKeys: String, CodingKey { case id, date, host, user, origin, conflict, resolved, discardable }

    /// Writes every field, absent values as `null`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(date.map(VersionSummary.dateString), forKey: .date)
        try container.encode(host, forKey: .host)
        try container.encode(user, forKey: .user)
        try container.encode(origin, forKey: .origin)
        try container.encode(conflict, forKey: .conflict)
        try container.encode(resolved, forKey: .resolved)
        try container.encode(discardable, forKey: .discardable)
    }

    /// `2026-11-22T10:15:00Z`, as every date notes prints.
    static func dateString(_ date: Date) -> String { NoteCoding.text(of: date) }

    /// The state column of the text tables.
    var state: String {
        if conflict { return resolved ? "conflict, resolved" : "CONFLICT" }
        return discardable ? "discardable" : ""
    }
}

extension NotesLibrary {
    /// Adopts the conflict copies sync engines left in the library (`trip.sync-conflict-….note`,
    /// `trip.note/body.sync-conflict-….json`, …) into the store as unresolved conflict versions,
    /// saying so on stderr. A failure is a warning: the command goes on without it.
    func adoptConflictCopies() {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        do throws(DocumentKitError) {
            report(try store.adoptConflictCopies(in: url))
        } catch {
            warn("warning: sync engines' conflict copies could not be adopted: \(error)")
        }
    }

    /// Says on stderr which notes' conflict copies were adopted.
    func report(_ adopted: [FileVersion]) {
        for (item, versions) in Dictionary(grouping: adopted, by: { $0.itemURL.lastPathComponent }).sorted(by: { $0.key < $1.key }) {
            let count = versions.count == 1 ? "a conflict version" : "\(versions.count) conflict versions"
            warn("\(item): a sync engine's conflict copies became \(count) (`notes conflicts` lists them)")
        }
    }

    /// The versions of the note at `noteURL`; the store's problems are warnings on stderr unless
    /// `reportingProblems` is false.
    func versions(of noteURL: URL, title: String, reportingProblems: Bool = true) throws -> VersionListing {
        let listing: VersionListing
        do throws(DocumentKitError) { listing = try store.versions(ofItemAt: noteURL) } catch { throw NotesError(error, note: title) }
        if reportingProblems {
            for problem in listing.problems { warn("warning: version store: \(problem)") }
        }
        return listing
    }

    /// The version `id` of the note at `noteURL` (the current one too), else exit 66.
    func version(_ id: String, of noteURL: URL, title: String) throws -> FileVersion {
        let listing = try versions(of: noteURL, title: title)
        if let current = listing.current, current.persistentIdentifier == id || id == "current" { return current }
        guard let version = listing.others.first(where: { $0.persistentIdentifier == id }) else {
            throw NotesError(.noSuchNote, "“\(title)”: no version \(id) of this note (`notes versions \(Self.quoted(title))` lists them)")
        }
        return version
    }

    /// A version's note, read-only: opened where the store keeps it, without coordination (the
    /// store never changes a version's contents).
    func open(_ version: FileVersion) async throws(DocumentKitError) -> NoteDocument {
        guard !version.isCurrent else { return try await open(version.itemURL) }
        let document = NoteDocument(fileURL: version.url, readerVersion: readerVersion)
        try await document.open()
        return document
    }

    /// `title` as a shell word.
    static func quoted(_ title: String) -> String {
        title.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } ? title : "\"\(title)\""
    }
}

/// A note that `versions`, `restore` and `rm` work on: read, or only found by its package name
/// when it can't be read (a damaged manifest, members that don't match it).
struct VersionedNote {
    let url: URL
    /// Its title, or the name it was asked by when it can't be read.
    let title: String
    /// The note, read; nil when it can't be.
    let document: NoteDocument?
    /// Why it can't be read.
    let problem: NotesError?

    /// How commands name it: “Trip” (trip.note).
    var name: String { "“\(title)” (\(url.lastPathComponent))" }
}

extension NotesLibrary {
    /// The note `title` names (``lookUp(_:)``); a note that can't be read is found by its package
    /// name or the title in its manifest, with a warning saying why it can't be read: its versions
    /// are what is needed to bring it back.
    func findForVersions(_ title: String) async throws -> VersionedNote {
        switch try await lookUp(title) {
        case .note(let entry):
            return VersionedNote(url: entry.url, title: entry.note.title, document: entry.document, problem: nil)
        case .unreadable(let url, let error):
            let problem = NotesError(error, note: title)
            warn("warning: \(problem.message)")
            return VersionedNote(url: url, title: title, document: nil, problem: problem)
        }
    }
}
