import DocumentKit
import Foundation

/// A folder of notes, each a `<slug>.note` package. Every read and write of a note is
/// coordinated with other processes (see `FileCoordinator`), and every note is read and written
/// as format `readerVersion`.
struct NotesLibrary {
    let url: URL
    let coordinator: FileCoordinator
    var readerVersion: Int
    /// The library's version store (`.documentkit-versions` in the library folder): the notes'
    /// previous versions and conflict versions.
    var store: VersionStore
    /// The library's document index (see `NotesLibrary+Index.swift`); nil with `NOTES_INDEX=off`.
    let index: DocumentIndex?
    /// Whether the sync engines' conflict copies among what the index finds changed are adopted
    /// (set by `LibraryOptions.adoptedLibrary` for a library that can be written).
    var adoptsConflictCopies = false
    /// How notes and their versions are flushed (`notes serve --flush`): `.durable` unless set
    /// with ``flushing(_:)``.
    private(set) var durability: Durability = .durable

    /// The library at `url`; `syncEngines`: the sync engines it lives under, whose conflict copies are adopted.
    /// `persistentIndex`: false for a command that adopts no copies (see `LibraryOptions.notesLibrary`).
    init(
        url: URL, coordinator: FileCoordinator, readerVersion: Int = NoteFormat.currentVersion,
        syncEngines: Set<ConflictCopyName.Engine> = ConflictCopyName.Engine.all, persistentIndex: Bool = true
    ) {
        self.url = url
        self.coordinator = coordinator
        self.readerVersion = readerVersion
        self.index = Self.makeIndex(of: url, readerVersion: readerVersion, persistent: persistentIndex)
        self.store = VersionStore(
            libraryURL: url, coordinator: coordinator, manifestName: NoteFormat.manifestName, syncEngines: syncEngines)
    }

    /// This library with its notes and versions flushed as `durability` says; `versionCompletion`:
    /// whether a save returns before the version it keeps is complete (a server's answer does not
    /// wait for it; see `VersionStore.VersionCompletion`).
    func flushing(_ durability: Durability, versionCompletion: VersionStore.VersionCompletion = .beforeSaveReturns) -> NotesLibrary {
        var library = self
        library.durability = durability
        library.store = VersionStore(
            libraryURL: store.libraryURL, coordinator: store.coordinator, manifestName: store.manifestName, pruning: store.pruning,
            durability: durability, fileSystem: store.fileSystem, syncEngines: store.syncEngines, versionCompletion: versionCompletion)
        return library
    }

    /// Where the notes' drafts are kept (recovery data, `notes recover`): the hidden folder
    /// `.documentkit-drafts` of the library.
    var draftsFolder: URL { Self.draftsFolder(of: url) }

    static func draftsFolder(of library: URL) -> URL {
        library.appendingPathComponent(".documentkit-drafts", isDirectory: true)
    }

    /// The coordinator of this user's processes, for which `.note` folders are packages.
    static func makeCoordinator() throws -> FileCoordinator {
        do { return FileCoordinator(namespace: try .default(packageExtensions: [NoteFormat.packageExtension])) } catch {
            // 77 for a folder another user could control (the message names it and what to do).
            throw NotesError(error.code == .untrustedFolder ? .readOnly : .ioError, "can't set up coordination: \(error)")
        }
    }

    /// An entry of the library: where a note is, read.
    struct Entry {
        let url: URL
        let document: NoteDocument
        var note: Note { document.content }
        /// When the note was last saved: its manifest's modification time, as the index records it
        /// (a package folder's own time moves with its names, not with what is written in them).
        var modified: Date {
            let manifest = document.fileWrapper?.fileWrappers?[NoteFormat.manifestName]
            return manifest?.modificationDate ?? document.fileWrapper?.modificationDate ?? Date(timeIntervalSince1970: 0)
        }
    }

    /// The error for a library path that is a file, not a folder.
    static func notAFolder(_ url: URL) -> NotesError {
        NotesError(
            .cantCreate,
            "\(url.path) is a file, not a library folder: name a folder with --library or $NOTES_LIBRARY, or move the file away and run `notes init`",
            path: url.path)
    }

    /// Whether the library folder can't be written (a read-only mount, or no write permission).
    var isReadOnly: Bool { access(url.path, W_OK) != 0 && (errno == EROFS || errno == EACCES || errno == EPERM) }

    /// Throws, with exit status 77, if the library is read-only: before a command that changes it.
    func requireWritable() throws {
        guard isReadOnly else { return }
        throw NotesError(
            .readOnly,
            "the library \(url.path) is read-only (a read-only mount, or not writable by you): its notes can be read "
                + "(list, show, versions, check) but not changed. Remount it read-write or ask its owner.",
            path: url.path)
    }

    /// Creates the library folder if it is missing.
    func create() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue { throw Self.notAFolder(url) }
        do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
            throw NotesError(.ioError, "can't create the library folder \(url.path): \(error.localizedDescription)")
        }
    }

    /// Opens the note at `url`, as format `readerVersion`.
    ///
    /// - Parameter presenting: Whether the document presents its file (reloads, conflicts,
    ///   moves; no autosave then). A command that asks for it must close the document before it
    ///   exits. Without it (most commands run for a moment and exit without closing every note
    ///   they read) there is no presenter: a reload it started could still run as the process exits.
    func open(_ url: URL, presenting: Bool = false) async throws(DocumentKitError) -> NoteDocument {
        let document = NoteDocument(fileURL: url, readerVersion: readerVersion, coordinator: coordinator, durability: durability)
        document.versionStore = store
        document.packageSettlePeriod = Self.settlePeriod
        document.presentsFile = presenting
        // Whether a note is a copy of another is looked up in the index, not in every note.
        document.identityLookup = await index?.identityLookup()
        if presenting { document.autosavePolicy = nil }
        try await document.open()
        return document
    }

    /// How long nothing in a note's package must have changed before members that don't match
    /// its manifest count as another program's edit (`notes repair` accepts them) rather than a
    /// sync still delivering it: `$NOTES_SETTLE_SECONDS` if set (tests), else DocumentKit's default.
    static var settlePeriod: Duration {
        guard let text = ProcessInfo.processInfo.environment["NOTES_SETTLE_SECONDS"], let seconds = Double(text), seconds >= 0
        else { return PackageVerification.defaultSettlePeriod }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// A new note at `url`, not saved yet, in format `readerVersion`.
    func newDocument(at url: URL, note: Note) -> NoteDocument {
        let document = NoteDocument(fileURL: url, content: note, readerVersion: readerVersion, coordinator: coordinator, durability: durability)
        document.versionStore = store
        document.presentsFile = false
        return document
    }

    /// The packages in the library, sorted by name, after completing interrupted saves.
    func packageURLs() throws -> [URL] {
        try requireFolder()
        // A note whose save was cut off between the two renames of the fallback swap exists only
        // under hidden names until recovery completes it: run it before every listing.
        do { try FileItem.completeInterruptedSaves(inFolderAt: url) } catch { warn("\(error)") }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: url.path) } catch {
            throw NotesError(.ioError, "can't list the library \(url.path): \(error.localizedDescription)")
        }
        return names.filter { !$0.hasPrefix(".") && $0.hasSuffix("." + NoteFormat.packageExtension) }.sorted()
            .map { url.appendingPathComponent($0, isDirectory: true) }
    }

    /// Throws, with exit status 66, if there is no library folder (73 if it is a file).
    func requireFolder() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw NotesError(.noSuchNote, "no library at \(url.path) (run `notes init` to create it)", path: url.path)
        }
        guard isDirectory.boolValue else { throw Self.notAFolder(url) }
    }

    /// Every readable note; unreadable ones are reported through `problem`.
    func entries(problem: (URL, DocumentKitError) -> Void = { _, _ in }) async throws -> [Entry] {
        var result: [Entry] = []
        for packageURL in try packageURLs() {
            do {
                // Where the note is read: it may have moved while the read waited.
                let document = try await open(packageURL)
                result.append(Entry(url: document.fileURL, document: document))
            } catch {
                problem(packageURL, error)
            }
        }
        return result
    }

    /// The note `title` names (see ``lookUp(_:)``); a package that can't be read is an error saying why.
    func find(_ title: String) async throws -> Entry {
        switch try await lookUp(title) {
        case .note(let entry): return entry
        case .unreadable(_, let error): throw NotesError(error, note: title)
        }
    }

    /// The error of a lookup of `title` that matched several notes: their paths, and how to name
    /// one (by its package) or tell them apart (rename one; a copy sharing the original's
    /// document identifier gets one of its own from `notes check --fix`).
    static func ambiguity(_ title: String, _ matches: [Candidate]) -> NotesError {
        var message = "“\(title)”: \(matches.count) notes have this title: \(matches.map(\.url.path).joined(separator: ", ")). "
            + "Name one by its package (`notes show \(matches[1].url.lastPathComponent)`), or rename one "
            + "(`notes mv \(matches[1].url.lastPathComponent) \"NEW TITLE\"`)."
        if Set(matches.map(\.documentIdentifier)).count < matches.count {
            message += " Some are copies of one note (they share its document identifier): `notes check --fix` gives each copy one of its own."
        }
        return NotesError(.badData, message)
    }

    /// The document identifier in the manifest of the package at `url`, if it can be read.
    static func documentIdentifier(ofPackageAt url: URL) -> String? { manifest(ofPackageAt: url)?.documentIdentifier }

    /// The manifest of the package at `url`, if it can be read (whatever its members).
    static func manifest(ofPackageAt url: URL) -> DocumentManifest? {
        let manifestURL = url.appendingPathComponent(NoteFormat.manifestName)
        guard let data = RegularFile.contents(of: manifestURL) else { return nil }
        return try? DocumentManifest(jsonData: data, path: manifestURL.path)
    }

    /// The packages that share a document identifier with another (copies made by `cp -r` or a
    /// sync engine), grouped by identifier; each group in package-name order. A sync engine's
    /// conflict copy (`trip.sync-conflict-….note`) is not one: it is adopted as a conflict version.
    func packagesSharingIdentifiers() throws -> [String: [URL]] {
        var groups: [String: [URL]] = [:]
        for package in try packageURLs() where ConflictCopyName(parsing: package.lastPathComponent) == nil {
            if let identifier = Self.documentIdentifier(ofPackageAt: package) { groups[identifier, default: []].append(package) }
        }
        return groups.filter { $0.value.count > 1 }
    }

    /// Of packages sharing one document identifier, the one that keeps it (the others are the
    /// copies): a copy this app can't change (a newer format, damaged); else the one at the place
    /// where the version store last kept a version of the identifier (the rule a document's own
    /// save follows, see DocumentKit's `Document`), even while a sync engine is changing it (the
    /// caller then answers "busy"); else the one named after its title (`trip.note` for “Trip”),
    /// else the first by name. A package gone or without its manifest meanwhile (`rm -rf`
    /// part-way) is not a candidate; one still arriving or changing while it is read (`cp -r`
    /// or a sync engine part-way through it) comes after every whole one in those last two rules.
    func original(among packages: [URL]) async -> URL {
        var writable: [(url: URL, title: String)] = []
        var busy: [URL] = []
        for package in packages {
            do throws(DocumentKitError) {
                let document = try await open(package)
                if document.formatStatus?.isReadOnly == true { return package }
                writable.append((package, document.content.title))
            } catch {
                // Gone, or without a manifest (`rm -rf` part-way): it names no identifier now.
                if error.code == .notFound || Self.manifest(ofPackageAt: package) == nil { continue }
                if NotesError.status(for: error) == .busy {
                    busy.append(package)
                    continue
                }
                return package
            }
        }
        let candidates = writable.map(\.url) + busy
        guard let first = candidates.first else { return packages[0] }
        if let newest = (try? store.otherVersions(ofItemAt: first))?
            .max(by: { ($0.modificationDate ?? .distantPast) < ($1.modificationDate ?? .distantPast) }),
            let holder = candidates.first(where: { $0.lastPathComponent == newest.localizedName })
        {
            return holder
        }
        let names = Set(writable.map { Self.slug(for: $0.title) + "." + NoteFormat.packageExtension })
        let named = writable.first { names.contains($0.url.lastPathComponent) }?.url ?? busy.first { names.contains($0.lastPathComponent) }
        return named ?? first
    }

    /// Gives the note at `url` a new document identifier (under a coordinated write), keeping
    /// its text. Its versions stay with the old identifier (the original's), and its replaced
    /// state is not kept as one of them. Returns the new identifier.
    func giveNewIdentifier(to url: URL) async throws -> UUID {
        let identifier = UUID()
        try await coordinator.coordinate(with: [.writingIntent(with: url)]) { granted in
            do throws(DocumentKitError) {
                let document = try await open(granted[0].url)
                document.versionStore = nil
                try document.update { $0.documentIdentifier = identifier }
                try await document.close()
            } catch {
                throw NotesError(error, note: url.lastPathComponent)
            }
        }
        return identifier
    }

    /// The packages `title` names (by title or package name, readable or not), or every package
    /// when `title` is nil: what `check` and `migrate` work on.
    func select(_ title: String?) async throws -> [URL] {
        guard let title else {
            guard index != nil else { return try packageURLs() }
            try requireFolder()
            do { try FileItem.completeInterruptedSaves(inFolderAt: url) } catch { warn("\(error)") }
            await refreshIndex(full: true)
            return await indexedNotes().map(\.url)
        }
        do { return [try await find(title).url] } catch {
            let byName = Self.packageName(for: title)
            if let url = try packageURLs().first(where: { $0.lastPathComponent == byName }) { return [url] }
            throw error
        }
    }

    /// Changes the note at `url` under one coordinated write: the note is read again under the
    /// lock, changed and saved, so that two processes editing it at once both land. A note moved
    /// while the write waited is changed at its new place.
    ///
    /// When the note moved while the write waited (`notes mv` in another process), the write is
    /// given up before anything is read and taken again at the note's new place, so that every
    /// read of the edit is under the write it asked for (a read of the new place inside a write of
    /// the old one could find it held by another process, and fail as a deadlock risk).
    func edit(_ url: URL, title: String, _ change: @escaping @Sendable (inout Note) -> Void) async throws -> Note {
        var target = url
        for _ in 0..<Self.creationAttempts {
            let mark = await markListing(for: [target])
            let outcome: EditOutcome = try await coordinator.coordinate(with: [.writingIntent(with: target)]) { granted in
                let place = granted[0].url
                if place.standardizedFileURL.path != target.standardizedFileURL.path { return .moved(place) }
                do throws(DocumentKitError) {
                    let document = try await open(place)
                    try document.update(change)
                    try await document.close()
                    if let status = document.formatStatus, let from = status.migratedFromFormatVersion {
                        warn(Self.upgradeNotice(title: document.content.title, from: from, to: readerVersion))
                    }
                    return .edited(document.content)
                } catch {
                    throw NotesError(error, note: title)
                }
            }
            switch outcome {
            case .edited(let note):
                await noteChanges(at: [target], since: mark)
                return note
            case .moved(let place): target = place
            }
        }
        throw NotesError(.busy, "“\(title)”: the note kept moving while this edit waited for it; try again", path: target.path)
    }

    /// What one coordinated attempt of ``edit(_:title:_:)`` gave.
    private enum EditOutcome: Sendable {
        case edited(Note)
        /// The note moved there while the write waited.
        case moved(URL)
    }

    /// What a save that upgraded a note says: the original is kept as a version.
    static func upgradeNotice(title: String, from: Int, to: Int) -> String {
        "“\(title)” is now in format \(to) (it was in format \(from)). " + originalKept(title: title, from: from)
    }

    /// Where the original of a note upgraded from format `from` is: the save kept it as a version.
    static func originalKept(title: String, from: Int) -> String {
        "The format-\(from) original is kept as a version: `notes versions \(quoted(title))`."
    }

    /// The package name `title` stands for: itself if it ends in `.note`, else its slug's.
    static func packageName(for title: String) -> String {
        title.hasSuffix("." + NoteFormat.packageExtension) ? title : slug(for: title) + "." + NoteFormat.packageExtension
    }

    /// `My Trip!` → `my-trip`: lower-case letters and digits, dashes between words.
    static func slug(for title: String) -> String {
        var slug = ""
        for character in title.lowercased() {
            if character.isLetter || character.isNumber { slug.append(character) }
            else if !slug.isEmpty && !slug.hasSuffix("-") { slug.append("-") }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        slug = String(slug.prefix(64))
        return slug.isEmpty ? "note" : slug
    }
}

/// Writes `message` on stderr as a line of its own, prefixed by `notes: `.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("notes: \(message)\n".utf8))
}
