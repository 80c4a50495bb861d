import DocumentKit
import Foundation

/// The notes API over one library: every operation of the HTTP routes, with entity tags.
///
/// A note's id is its document identifier (a UUID, stable across renames); its `ETag` is the
/// SHA-256 of its manifest (``EntityTag``). Every write runs under a coordinated write of the
/// note, in which the current tag is compared with `If-Match` before anything changes: a
/// write that lost a race with another process, coordinated or not, fails with 412 and never
/// overwrites what it hasn't seen. A write is acknowledged only after its save returned (atomic
/// and durable: `fsync` of the new package and of the folder).
struct NotesAPI: Sendable {
    let library: NotesLibrary
    let events: EventHub
    let limits: ServerLimits
    /// The bodies of `GET /api/notes/{id}` while their notes are unchanged.
    let responses = NoteResponseCache()
    /// The notes this server saved last, for their next `PUT`.
    let savedNotes = SavedNoteCache()

    /// The package of the note `id`, found through the index (checked now with a `stat`), else
    /// after a look at the library's listing. 404 if there is none.
    func locate(_ id: String) async throws -> URL {
        guard let identifier = UUID(uuidString: id)?.uuidString else { throw APIError.noSuchNote(id) }
        guard let index = library.index else {
            let notes = try await library.listedNotes(problem: { _, _ in })
            // A copy (`cp -r`) holds the identifier too until its first save: the original is the note.
            let holders = notes.filter { $0.documentIdentifier == identifier }.map(\.url)
                .filter { ConflictCopyName(parsing: $0.lastPathComponent) == nil }
            if holders.count > 1 { return await library.original(among: holders.sorted { $0.path < $1.path }) }
            guard let note = holders.first else { throw APIError.noSuchNote(id) }
            return note
        }
        for round in 0..<2 {
            if round == 1 { await library.refreshIndex() }
            var found: [URL] = []
            for entry in await Self.entries(of: identifier, in: index)
            where NotesLibrary.isNote(entry) {
                if let now = await index.revalidate(relativePath: entry.relativePath),
                    now.documentIdentifier.flatMap(UUID.init(uuidString:))?.uuidString == identifier
                {
                    found.append(now.url)
                }
            }
            // A sync engine's conflict copy shares the identifier: it is not the note.
            found = found.filter { ConflictCopyName(parsing: $0.lastPathComponent) == nil }
            if found.count == 1 { return found[0] }
            if found.count > 1 { return await library.original(among: found.sorted { $0.path < $1.path }) }
        }
        throw APIError.noSuchNote(id)
    }

    /// The index's entries of the note `id` (a UUID, written in either letter case in a manifest).
    static func entries(of id: String, in index: DocumentIndex) async -> [IndexEntry] {
        await index.entries(withDocumentIdentifier: id) + index.entries(withDocumentIdentifier: id.lowercased())
    }

    /// The tag of the note at `url` as it is on disk now; nil when it has no manifest to name it.
    func tag(at url: URL) -> EntityTag? {
        if let digest = library.store.contentDigest(ofItemAt: url) { return EntityTag(digest: digest) }
        let manifest = url.appendingPathComponent(NoteFormat.manifestName)
        return RegularFile.contents(of: manifest).map { EntityTag(digest: NotesAPI.sha256($0)) }
    }

    /// How many unresolved conflict versions the note at `url` has (nil when the store can't be read).
    func conflictCount(at url: URL) -> Int? {
        try? library.store.unresolvedConflictCount(ofItemAt: url)
    }

    /// ``conflictCount(at:)`` under a coordinated read of the note: after a conflict copy that is
    /// being kept as a conflict version (under a coordinated write of the note) is in the store.
    func coordinatedConflictCount(at url: URL) async -> Int? {
        try? await library.coordinator.coordinate(with: [.readingIntent(with: url)]) { granted in
            conflictCount(at: granted[0].url)
        }
    }

    static func sha256(_ data: Data) -> String { data.withUnsafeBytes { MemberHasher.sha256(of: $0) } }

    /// The note `id` as the API shows it, read under a coordinated read so that its tag and
    /// its contents are of one state.
    func note(_ id: String) async throws -> (NoteResource, EntityTag?) {
        let url = try await locate(id)
        return try await library.coordinator.coordinate(with: [.readingIntent(with: url)]) { granted in
            let place = granted[0].url
            let tag = tag(at: place)
            let document: NoteDocument
            do throws(DocumentKitError) { document = try await library.open(place) } catch { throw NotesError(error, note: id) }
            guard document.content.documentIdentifier.uuidString == UUID(uuidString: id)?.uuidString else { throw APIError.noSuchNote(id) }
            return (resource(of: document, at: place, tag: tag), tag)
        }
    }

    /// The API's view of an open note.
    func resource(of document: NoteDocument, at place: URL, tag: EntityTag?, conflicts known: [FileVersion]? = nil) -> NoteResource {
        let note = document.content
        let id = note.documentIdentifier.uuidString
        let modified = RegularFile.modificationDate(of: place.appendingPathComponent(NoteFormat.manifestName))
            ?? NotesLibrary.Entry(url: place, document: document).modified
        // The manifest as it is now: after a save, the document's own record of it is the one it opened.
        let manifest = NotesLibrary.manifest(ofPackageAt: place) ?? document.formatStatus?.manifestOnDisk
        let members = manifest?.members ?? [:]
        let attachments = note.attachments.keys.sorted().map { name -> AttachmentResource in
            let record = members[NoteFormat.attachmentsName + "/" + name]
            let size = record?.size ?? Int64((try? note.attachments[name]?.regularFileContents.count) ?? 0)
            let info = note.attachmentInfo[name]
            return AttachmentResource(
                name: name, url: APIPath.attachment(name, of: id), size: size,
                mediaType: info?.mediaType ?? AttachmentInfo.mediaType(of: name),
                etag: record.map { EntityTag(digest: $0.sha256).description } ?? "", added: info?.added)
        }
        let conflicts = known?.count ?? conflictCount(at: place) ?? 0
        return NoteResource(
            id: id, title: note.title, url: APIPath.note(id), etag: tag?.description ?? "", tags: note.tags,
            modified: modified, created: note.created, body: note.body,
            formatVersion: manifest?.formatVersion ?? library.readerVersion,
            readOnly: document.formatStatus?.isReadOnly ?? false, attachments: attachments, conflicts: conflicts)
    }

    /// A page of the library's notes, in title order (then id): at most `limit` after `cursor`
    /// (the last note of the previous page, as ``NoteListing/next`` gave it).
    func list(limit: Int, after cursor: ListingCursor?) async throws -> NoteListing {
        var listed = try await library.listedNotes(problem: { _, _ in })
        // Copies sharing an id (`cp -r` of a package): listed once, as GET /api/notes/{id} gives it.
        for (id, copies) in Dictionary(grouping: listed, by: \.documentIdentifier) where copies.count > 1 {
            let original = await library.original(among: copies.map(\.url).sorted { $0.path < $1.path })
            listed.removeAll { $0.documentIdentifier == id && $0.url != original }
        }
        let sorted = listed.map { (key: ListingCursor(title: $0.title, id: $0.documentIdentifier), note: $0) }
            .sorted { $0.key < $1.key }
        let page = sorted.filter { cursor == nil || cursor! < $0.key }.prefix(limit)
        var notes: [NoteListItem] = []
        for (key, note) in page {
            let manifest = NotesLibrary.manifest(ofPackageAt: note.url)
            let tags = (try? manifest?.additionalFields["tags"]?.decode([String].self)) ?? nil
            notes.append(NoteListItem(
                id: key.id, title: note.title, url: APIPath.note(key.id), etag: tag(at: note.url)?.description ?? "",
                tags: tags ?? [], modified: note.modified, conflicts: note.conflicts ?? 0))
        }
        let more = page.count == limit && sorted.last.map { $0.key != page.last?.key } == true
        return NoteListing(notes: notes, next: more ? page.last?.key : nil)
    }
}

/// A page of `GET /api/notes`, and the cursor of the next one.
struct NoteListing: Sendable {
    let notes: [NoteListItem]
    let next: ListingCursor?
}

/// Where a page of the listing ends: the title and id of its last note, sent as an opaque
/// base64url token (`?cursor=`).
struct ListingCursor: Comparable, Sendable {
    let title: String
    let id: String

    static func < (a: ListingCursor, b: ListingCursor) -> Bool {
        let (x, y) = (a.title.lowercased(), b.title.lowercased())
        return x != y ? x < y : a.title != b.title ? a.title < b.title : a.id < b.id
    }

    /// The token a client sends back.
    var token: String {
        Data((title + "\n" + id).utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The cursor a token stands for; nil for a token this server didn't make.
    init?(token: String) {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
            let newline = text.lastIndex(of: "\n")
        else { return nil }
        self.init(title: String(text[..<newline]), id: String(text[text.index(after: newline)...]))
    }

    init(title: String, id: String) {
        self.title = title
        self.id = id
    }
}

/// Limits of what the server accepts.
struct ServerLimits: Sendable {
    /// The largest JSON body (`--max-body-bytes`).
    var maxBodyBytes = 1 << 20
    /// The largest attachment upload (`--max-attachment-bytes`).
    var maxAttachmentBytes = 256 << 20
    /// The largest page of `GET /api/notes`.
    var maxPageSize = 1000
}
