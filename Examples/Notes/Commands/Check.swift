import ArgumentParser
import DocumentKit
import Foundation

/// What `notes check` found about one note (one element of `notes check --json`).
struct NoteCheck: Encodable {
    /// How the note opens for this version of the app.
    enum Outcome: String, Encodable {
        case readWrite = "read-write"
        case readWritePreservingUnknown = "read-write-preserving-unknown"
        case readOnly = "read-only"
        case migrated
        case refused
    }

    /// The members as the manifest lists them.
    struct Members: Encodable {
        /// Nil when the manifest doesn't record members (notes written before format 2's app).
        let listed: Int?
        let matching: Int
        /// Files the manifest doesn't list, such as a sync engine's conflict copies.
        let unlisted: [String]
    }

    let package: String
    let path: String
    let title: String?
    var outcome: Outcome
    /// For `migrated`: the version the note is upgraded to in memory (and written in by `notes migrate`).
    let migratedTo: Int?
    /// What the outcome means, or the error that refused the note.
    var message: String
    /// The error's code, for `refused`.
    let problem: String?
    /// The format version on disk, when the manifest could be read.
    let formatVersion: Int?
    let minReaderVersion: Int?
    let minWriterVersion: Int?
    let writer: String?
    /// Manifest fields, optional features and migrations this version doesn't know, kept by its saves.
    let unrecognizedFields: [String]?
    let unrecognizedFeatures: [String]?
    let unrecognizedMigrations: [String]?
    /// The migration steps an open runs in memory.
    let migrationSteps: [String]?
    let members: Members?
    /// What the library's version store holds of the note (nil when it could not be read).
    var store: Store?
    /// The paths of the other packages with this note's document identifier (copies made by
    /// `cp -r` or a sync engine; `notes check --fix` gives each copy one of its own); nil if none.
    var sameDocumentIdentifierAs: [String]?

    /// The note's versions in the store.
    struct Store: Encodable {
        /// Versions kept, conflict versions included.
        let versions: Int
        let unresolvedConflicts: Int
        /// Damaged entries of the store, each naming its path and what is wrong (skipped).
        let problems: [String]
        /// Sync engines' conflict copies of the note not adopted yet (the next command that
        /// reads the library adopts them).
        let pendingConflictCopies: [String]
    }

    /// Says that the note can't be changed because its library is read-only (a note that opens).
    mutating func markReadOnlyLibrary(_ library: URL) {
        guard outcome != .refused else { return }
        outcome = .readOnly
        message = "The library \(library.path) is read-only (a read-only mount, or not writable by you): the note "
            + "can be read but not changed. " + message
    }

    /// Whether the note can't be opened by this version, or shares its identity with another.
    var isWrong: Bool { outcome == .refused || sameDocumentIdentifierAs != nil }
}

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check notes: their format and version, manifest and members.",
        discussion: """
            For every note (or the one named): how this version opens it (read-write, read-write keeping \
            what it does not understand, read-only, upgraded from an older format, or refused and why), the \
            manifest's versions and writer, whether its members match the manifest, and what the version \
            store holds of it (versions, unresolved conflicts, damaged entries, conflict copies not adopted \
            yet), and which notes share a document identifier with another: copies of one note made by \
            `cp -r` or a sync engine, which `notes versions` and the version store can't tell apart. The \
            notes are not written, except with --fix: of packages sharing an identifier, the one at the place \
            where the version store last kept a version of it, else the one named after its title \
            (`trip.note` for “Trip”), else the first by name, keeps it, and every other gets a new \
            one, keeping its text (the shared versions stay with the one that kept the identifier).
            Exit status: 0 if every note opens and has an identifier of its own, 65 if one is damaged, \
            incomplete or too new, or shares its identifier.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "Only this note (its title or package name).") var title: String?
    @Flag(help: "Print JSON: an array of checks.") var json = false
    @Flag(help: "Give every copy that shares another note's document identifier one of its own, then check.") var fix = false

    func run() async throws {
        try await runReportingErrors {
            let library = try options.notesLibrary
            if fix { try library.requireWritable() }
            if fix { try await Self.fixSharedIdentifiers(in: library, quiet: json) }
            let shared = try library.packagesSharingIdentifiers().values
            var checks: [NoteCheck] = []
            for url in try await library.select(title) {
                var check = await Self.check(url, in: library)
                if library.isReadOnly { check.markReadOnlyLibrary(library.url) }
                check.store = Self.storeCheck(url, in: library)
                if let group = shared.first(where: { $0.contains(url) }) {
                    check.sameDocumentIdentifierAs = group.filter { $0 != url }.map(\.path)
                }
                checks.append(check)
            }
            if json {
                try printJSON(checks)
            } else {
                for check in checks { print(Self.line(for: check)) }
            }
            if checks.contains(where: \.isWrong) { throw ExitCode(NotesError.Status.badData.rawValue) }
        }
    }

    /// Gives every copy sharing a document identifier a new one (see the discussion), saying so
    /// on stdout (on stderr if `quiet`: for `--json`).
    static func fixSharedIdentifiers(in library: NotesLibrary, quiet: Bool) async throws {
        for packages in try library.packagesSharingIdentifiers().values.sorted(by: { $0[0].path < $1[0].path }) {
            let original = await library.original(among: packages)
            for copy in packages where copy != original {
                do {
                    let identifier = try await library.giveNewIdentifier(to: copy)
                    let message = "\(copy.path): now has a document identifier of its own (\(identifier.uuidString)); it shared \(original.path)'s"
                    if quiet { warn(message) } else { print(message) }
                } catch {
                    // One copy that can't be changed doesn't stop the others; the check then reports it.
                    warn("\(copy.path): keeps the document identifier it shares with \(original.path): \(error)")
                }
            }
        }
    }

    /// Opens the note at `url` as the library's reader version, and says what happened.
    static func check(_ url: URL, in library: NotesLibrary) async -> NoteCheck {
        do {
            let document = try await library.open(url)
            let status = document.formatStatus
            return NoteCheck(url: url, title: document.content.title, status: status, readerVersion: library.readerVersion)
        } catch {
            return NoteCheck(url: url, refusedWith: error, manifest: manifest(at: url))
        }
    }

    /// What the store holds of the note at `url`; nil if the store can't be read (a newer format).
    static func storeCheck(_ url: URL, in library: NotesLibrary) -> NoteCheck.Store? {
        guard let listing = try? library.store.versions(ofItemAt: url) else { return nil }
        let pending = library.store.pendingConflictCopies(in: library.url)
            .filter { $0.path.hasPrefix(url.path + "/") || ConflictCopyName(parsing: $0.lastPathComponent)?.originalName == url.lastPathComponent }
        return NoteCheck.Store(
            versions: listing.others.count, unresolvedConflicts: listing.unresolvedConflicts.count,
            problems: listing.problems.map(\.description), pendingConflictCopies: pending.map(\.lastPathComponent))
    }

    /// The manifest of the package at `url`, if it can be read (for a note that was refused).
    private static func manifest(at url: URL) -> DocumentManifest? {
        guard let tree = try? FileWrapper(contentsOf: url) else { return nil }
        return try? DocumentManifest(package: tree, manifestName: NoteFormat.manifestName, packagePath: url.path)
    }

    static func line(for check: NoteCheck) -> String {
        var text = "\(check.package): \(check.outcome.rawValue)"
        if let title = check.title { text += " “\(title)”" }
        if let version = check.formatVersion, let writer = check.writer {
            text += ", format \(version) (readable from \(check.minReaderVersion ?? version), changeable from "
                + "\(check.minWriterVersion ?? version); written by \(writer))"
        }
        if let members = check.members {
            text += members.listed.map { ", \(members.matching) of \($0) members match" } ?? ", members not recorded"
            if !members.unlisted.isEmpty { text += ", unlisted: \(members.unlisted.joined(separator: ", "))" }
        }
        if let store = check.store {
            text += ", \(store.versions) version\(store.versions == 1 ? "" : "s") kept"
            if store.unresolvedConflicts > 0 { text += ", \(store.unresolvedConflicts) unresolved conflict\(store.unresolvedConflicts == 1 ? "" : "s")" }
            if !store.pendingConflictCopies.isEmpty { text += ", conflict copies to adopt: \(store.pendingConflictCopies.joined(separator: ", "))" }
        }
        var lines = text + "\n    " + check.message
        if let others = check.sameDocumentIdentifierAs {
            lines += "\n    has the document identifier of \(others.joined(separator: ", ")) too: one is a copy of the other "
                + "(`cp -r`, a sync engine); `notes check --fix` gives each copy one of its own"
        }
        for problem in check.store?.problems ?? [] { lines += "\n    version store: " + problem }
        return lines
    }
}

extension NoteCheck {
    /// A note that opened.
    init(url: URL, title: String, status: FormatStatus?, readerVersion: Int) {
        var outcome = Outcome.readWrite
        var unrecognized: UnrecognizedContent?
        switch status?.compatibility {
        case .readWritePreservingUnknown(let content)?:
            outcome = .readWritePreservingUnknown
            unrecognized = content
        case .readOnly?: outcome = .readOnly
        case .needsMigration?: outcome = .migrated
        case .readWrite?, .refused?, nil: break
        }
        let manifest = status?.manifestOnDisk
        let verification = status?.verification
        var message = status?.message ?? ""
        if outcome == .migrated, let status {
            let steps = status.migrationSteps.isEmpty ? "" : " through \(status.migrationSteps.joined(separator: ", "))"
            message = "It is in format \(status.manifestOnDisk.formatVersion): it opens upgraded in memory to format "
                + "\(readerVersion)\(steps), and is written in format \(readerVersion) at its next save (`notes migrate` "
                + "saves it now), which keeps the original as a version of the note."
        }
        self.init(
            package: url.lastPathComponent, path: url.path, title: title, outcome: outcome,
            migratedTo: outcome == .migrated ? readerVersion : nil, message: message, problem: nil,
            formatVersion: manifest?.formatVersion, minReaderVersion: manifest?.minimumReaderVersion,
            minWriterVersion: manifest?.minimumWriterVersion, writer: manifest.map { "\($0.writer.name) \($0.writer.version)" },
            unrecognizedFields: unrecognized?.fields, unrecognizedFeatures: unrecognized?.optionalFeatures,
            unrecognizedMigrations: unrecognized?.migrations, migrationSteps: status?.migrationSteps,
            members: verification.map {
                Members(listed: $0.hasMemberList ? $0.listedCount : nil, matching: $0.matchingCount, unlisted: $0.unlistedMembers)
            })
    }

    /// A note that was refused, with its manifest if that could be read.
    init(url: URL, refusedWith error: DocumentKitError, manifest: DocumentManifest?) {
        self.init(
            package: url.lastPathComponent, path: url.path, title: manifest?.additionalFields["title"]?.stringValue,
            outcome: .refused, migratedTo: nil,
            message: error.description + (error.code == .modifiedPackage ? " `notes repair \(url.lastPathComponent)` accepts its files as they are." : ""),
            problem: error.code.name,
            formatVersion: manifest?.formatVersion, minReaderVersion: manifest?.minimumReaderVersion,
            minWriterVersion: manifest?.minimumWriterVersion, writer: manifest.map { "\($0.writer.name) \($0.writer.version)" },
            unrecognizedFields: nil, unrecognizedFeatures: nil, unrecognizedMigrations: nil, migrationSteps: nil, members: nil)
    }
}
