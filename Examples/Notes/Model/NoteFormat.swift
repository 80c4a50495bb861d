import DocumentKit
import Foundation

/// The notes package format (`Formats/notes/vN/SPEC.md`): a package `SLUG.note` holding the
/// manifest `Info.json` (with the note's `title`, `created` and, from version 2, `tags`), the
/// body, and `attachments/`.
///
/// | version | body | adds | `minReaderVersion` |
/// | --- | --- | --- | --- |
/// | 1 | `body.md` | | 1 |
/// | 2 | `body.md` | `tags`, `attachments.json` (attachment metadata) | 1 |
/// | 3 | `body.json` (blocks) | | 3 |
enum NoteFormat {
    static let identifier = "org.documentkit.notes"
    /// The version this app reads and writes unless told otherwise (`--reader-version`).
    static let currentVersion = 3
    /// Every version this app can behave as the reader and writer of.
    static let versions = 1...currentVersion
    static let manifestName = "Info.json"
    /// The body as text, versions 1 and 2.
    static let bodyName = "body.md"
    /// The body as blocks, version 3.
    static let blocksName = "body.json"
    static let attachmentsName = "attachments"
    /// Attachment metadata, from version 2.
    static let attachmentInfoName = "attachments.json"
    static let packageExtension = "note"
    /// The app's version.
    static let appVersion = appVersion(for: currentVersion)

    /// The version of the app that reads and writes format `version`: 0.1.0, 0.2.0, 0.3.0.
    static func appVersion(for version: Int) -> String { "0.\(version).0" }

    /// The member holding the body in format `version`.
    static func bodyMember(for version: Int) -> String { version >= 3 ? blocksName : bodyName }

    /// The identifiers of the migration steps, never changed once shipped.
    enum Step {
        /// Version 2: an empty `tags` list, and metadata for the attachments there are.
        static let tagsAndAttachmentInfo = "notes-2-tags-and-attachment-info"
        /// Version 3: `body.md` becomes `body.json`, a list of blocks.
        static let bodyAsBlocks = "notes-3-body-as-blocks"
    }

    /// What the reader and writer of format `version` knows: its fields, what it lets older
    /// versions do with what it writes, and its migrations.
    static func description(version: Int) -> FormatDescription {
        precondition(versions.contains(version), "notes knows the formats \(versions), not \(version)")
        return descriptions[version - 1]
    }

    private static let descriptions: [FormatDescription] = versions.map { version in
        var migrator = FormatMigrator()
        if version >= 2 {
            migrator.registerMigration(Step.tagsAndAttachmentInfo, migrate: NoteMigrations.addTagsAndAttachmentInfo)
        }
        if version >= 3 { migrator.registerMigration(Step.bodyAsBlocks, migrate: NoteMigrations.storeBodyAsBlocks) }
        // Version 2 only adds what version 1 can ignore; version 3 moves the body out of its reach.
        let oldest = version >= 3 ? 3 : 1
        return FormatDescription(
            identifier: identifier, version: version,
            knownFields: version >= 2 ? ["title", "created", "tags"] : ["title", "created"],
            minimumReaderVersion: oldest, minimumWriterVersion: oldest, migrator: migrator, manifestName: manifestName)
    }

    /// Why a package is not a readable note.
    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
