import DocumentKit
import Foundation
import HTTPTypes

extension NotesAPI {
    /// What one coordinated attempt of a write gave.
    private enum WriteOutcome<T: Sendable>: Sendable {
        case done(T)
        /// The note moved there while the write waited: the write is taken again there.
        case moved(URL)
    }

    /// The save went into a copy of the note (`cp -r` of it, which the index knew of before the
    /// original's return): the copy took an identifier of its own at that save (DocumentKit's copy
    /// rule), so the write is not the note's and is taken again at the note.
    struct WroteIntoCopy: Error {}

    /// Runs `body` under a coordinated write of the note `id`, with its current tag and (with
    /// `opening`) the note read under the write. A note moved while the write waited is
    /// written at its new place; the index hears of the change at once.
    ///
    /// With `reusing`, the note is the document this server saved there last when its package is
    /// still what that save left (``SavedNoteCache``), and the document is kept for the next write
    /// once `body` has saved it (the body saves; it does not close the document).
    func write<T: Sendable>(
        _ id: String, opening: Bool = true, reusing: Bool = false, options: CoordinatedWritingOptions = [],
        _ body: @escaping @Sendable (_ place: URL, _ document: NoteDocument?, _ current: EntityTag?) async throws -> T
    ) async throws -> T {
        var target = try await locate(id)
        for _ in 0..<NotesLibrary.creationAttempts {
            let mark = await library.markListing(for: [target])
            let outcome: WriteOutcome<T>
            do {
                outcome = try await coordinatedWrite(id, at: target, opening: opening, reusing: reusing, options: options, body)
            } catch is WroteIntoCopy {
                await library.noteChanges(at: [target], since: mark)
                await library.refreshIndex()
                target = try await locate(id)
                continue
            }
            switch outcome {
            case .done(let value):
                await library.noteChanges(at: [target], since: mark)
                return value
            case .moved(let place): target = place
            }
        }
        throw NotesError(.busy, "note \(id) kept moving while this write waited for it; try again")
    }

    /// One attempt of ``write(_:opening:reusing:options:_:)`` at `target`.
    private func coordinatedWrite<T: Sendable>(
        _ id: String, at target: URL, opening: Bool, reusing: Bool, options: CoordinatedWritingOptions,
        _ body: @escaping @Sendable (_ place: URL, _ document: NoteDocument?, _ current: EntityTag?) async throws -> T
    ) async throws -> WriteOutcome<T> {
        try await library.coordinator.coordinate(with: [.writingIntent(with: target, options: options)]) {
            granted in
            let place = granted[0].url
            if place.standardizedFileURL.path != target.standardizedFileURL.path { return .moved(place) }
            let current = tag(at: place)
            var document: NoteDocument?
            var uses = 0
            if opening {
                if reusing, let kept = savedNotes.take(at: place, accepting: hasNoConflicts) {
                    (document, uses) = kept
                } else {
                    do throws(DocumentKitError) { document = try await library.open(place) } catch { throw NotesError(error, note: id) }
                }
                guard document?.content.documentIdentifier.uuidString == UUID(uuidString: id)?.uuidString else {
                    throw APIError.noSuchNote(id)
                }
                // The write saves it itself: no autosave is scheduled by its change.
                if reusing { document?.autosavePolicy = nil }
            }
            let value = try await body(place, document, current)
            // A save that gave the opened note another identifier saved a copy, not the note.
            if let document {
                try Self.requireIdentity(of: document, id)
                if reusing { savedNotes.keep(document, uses: uses, at: place) }
            }
            return .done(value)
        }
    }

    /// Whether the version store holds no unresolved conflict of the note `document` saved: a
    /// conflict can reach the store without changing the note's package (a sibling conflict copy
    /// adopted, a version added as a conflict), which the document kept since its save doesn't
    /// know; a note with one is read again (its open counts them and marks it in conflict).
    private func hasNoConflicts(_ document: NoteDocument) -> Bool {
        guard let identifier = document.manifest?.documentIdentifier else { return false }
        return (try? library.store.unresolvedConflictCount(ofDocumentIdentifier: identifier)) == 0
    }

    /// Throws ``WroteIntoCopy`` when `document`, saved as the note `id`, no longer has its
    /// identifier: it was a copy, and its save gave it one of its own.
    private static func requireIdentity(of document: NoteDocument, _ id: String) throws {
        let saved = (document.manifest?.documentIdentifier).flatMap(UUID.init(uuidString:))
        if saved != UUID(uuidString: id) { throw WroteIntoCopy() }
    }

    /// Throws 412 unless `condition` matches the current tag strongly; `applied` says whether
    /// the note already is what the request asks for (a retry whose response was lost: no 412).
    static func check(_ condition: EntityTag.Condition, current: EntityTag?, id: String, applied: Bool = false) throws -> Bool {
        if condition.matchesStrongly(current) { return true }
        if applied { return false }
        throw APIError.stale(current, id: id)
    }

    /// Replaces the note's body and tags (`PUT /api/notes/{id}`).
    func update(_ id: String, condition: EntityTag.Condition?, with change: NoteChangeRequest) async throws -> (NoteResource, EntityTag?) {
        guard let condition else { throw APIError.preconditionRequired("PUT /api/notes/\(id)") }
        if let tags = change.tags { try Self.checkTags(tags) }
        let result = try await write(id, reusing: true) { place, document, current in
            guard let document else { preconditionFailure("an opening write opens the note") }
            guard try Self.check(condition, current: current, id: id, applied: change.isApplied(to: document.content)) else {
                return (resource(of: document, at: place, tag: current), current, false)
            }
            do throws(DocumentKitError) {
                try document.update { change.apply(to: &$0) }
                try await document.save()
            } catch {
                throw NotesError(error, note: document.content.title)
            }
            let new = tag(at: place)
            // Opened and saved under this write: a note not in conflict then has none (no listing of its versions).
            let known: [FileVersion]? = document.documentState.contains(.inConflict) ? nil : []
            return (resource(of: document, at: place, tag: new, conflicts: known), new, true)
        }
        if result.2 { await events.publish(.changed, note: result.0) }
        return (result.0, result.1)
    }

    /// Creates a note (`POST /api/notes`); 409 if a note has its title.
    func create(_ request: NewNoteRequest) async throws -> (NoteResource, EntityTag?) {
        let title = try Self.checkTitle(request.title)
        try Self.checkTags(request.tags ?? [])
        try library.requireWritable()
        let note = Note(title: title, body: request.body ?? "", tags: request.tags ?? [])
        let url = try await library.create(note)
        let (resource, tag) = try await self.note(note.documentIdentifier.uuidString, at: url)
        await events.publish(.created, note: resource)
        return (resource, tag)
    }

    /// The note at `url` (just written by this process), as the API shows it.
    private func note(_ id: String, at url: URL) async throws -> (NoteResource, EntityTag?) {
        try await library.coordinator.coordinate(with: [.readingIntent(with: url)]) { granted in
            let place = granted[0].url
            let tag = tag(at: place)
            do throws(DocumentKitError) {
                return (resource(of: try await library.open(place), at: place, tag: tag), tag)
            } catch {
                throw NotesError(error, note: id)
            }
        }
    }

    /// Deletes the note (`DELETE /api/notes/{id}`); its last state is kept as a version.
    func delete(_ id: String, condition: EntityTag.Condition?) async throws {
        guard let condition else { throw APIError.preconditionRequired("DELETE /api/notes/\(id)") }
        let store = library.store
        let libraryURL = library.url
        let title: String? = try await write(id, opening: false, options: .forDeleting) { place, _, current in
            _ = try Self.check(condition, current: current, id: id)
            let title = NotesLibrary.manifest(ofPackageAt: place)?.additionalFields["title"]?.stringValue
            try await BlockingWork.run {
                do throws(DocumentKitError) {
                    // Inside this coordination: a store that doesn't coordinate again.
                    let inside = VersionStore(
                        libraryURL: libraryURL, manifestName: NoteFormat.manifestName, durability: store.durability,
                        syncEngines: store.syncEngines)
                    try inside.addVersion(ofItemAt: place, origin: .added)
                    try FileItem.remove(at: place)
                } catch {
                    throw NotesError(error, note: id)
                }
            }
            return title
        }
        await events.publishDeletion(id: UUID(uuidString: id)?.uuidString ?? id, title: title)
    }

    /// Renames the note (`POST /api/notes/{id}/rename`): its title, and its package after it.
    func rename(_ id: String, condition: EntityTag.Condition?, to request: RenameRequest) async throws -> (NoteResource, EntityTag?) {
        guard let condition else { throw APIError.preconditionRequired("POST /api/notes/\(id)/rename") }
        let title = try Self.checkTitle(request.title)
        let url = try await locate(id)
        if await library.existingNote(titled: title, excluding: url) != nil {
            throw APIError(.conflict, "cantCreate", "a note titled “\(title)” exists already")
        }
        let slug = NotesLibrary.slug(for: title)
        let destination = url.deletingPathExtension().lastPathComponent == slug ? url : library.newPackageURL(for: title)
        let mark = await library.markListing(for: [url, destination])
        let library = library
        let result: (NoteResource, EntityTag?, Bool) = try await library.coordinator.coordinate(with: [
            .writingIntent(with: url, options: .forMoving), .writingIntent(with: destination, options: .forReplacing),
        ]) { granted in
            let (place, target) = (granted[0].url, granted[1].url)
            let current = tag(at: place)
            do {
                let document = try await library.open(place)
                guard document.content.documentIdentifier.uuidString == UUID(uuidString: id)?.uuidString else { throw APIError.noSuchNote(id) }
                guard try Self.check(condition, current: current, id: id, applied: document.content.title == title) else {
                    return (resource(of: document, at: place, tag: current), current, false)
                }
                try document.update { $0.title = title }
                try await document.close()
                if target.standardizedFileURL.path != place.standardizedFileURL.path {
                    if NotesLibrary.itemExists(target) {
                        throw APIError(.conflict, "cantCreate", "\(target.lastPathComponent) appeared while the note was renamed; try again")
                    }
                    try FileItem.move(from: place, to: target)
                    try library.coordinator.item(at: place, didMoveTo: target)
                }
                let new = tag(at: target)
                return (resource(of: document, at: target, tag: new), new, true)
            } catch let error as DocumentKitError {
                throw NotesError(error, note: id)
            }
        }
        await library.noteChanges(at: [url, destination], since: mark)
        if result.2 { await events.publish(.changed, note: result.0) }
        return (result.0, result.1)
    }

    /// A title that can be a note's: not empty, one line, not too long.
    static func checkTitle(_ title: String) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw APIError.badRequest("`title` must not be empty") }
        guard !trimmed.contains(where: { $0.isNewline }), !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw APIError.badRequest("`title` must be one line without control characters")
        }
        guard trimmed.utf8.count <= 1000 else { throw APIError.badRequest("`title` must be at most 1000 bytes") }
        return trimmed
    }

    /// Tags: short, one line each.
    static func checkTags(_ tags: [String]) throws {
        guard tags.count <= 1000 else { throw APIError.badRequest("at most 1000 `tags`") }
        for tag in tags where tag.isEmpty || tag.utf8.count > 200 || tag.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw APIError.badRequest("each of `tags` must be 1 to 200 bytes without control characters")
        }
    }
}
