/// What opening a document found out about its format: the manifest on disk, what this app may
/// do with the document, how its members compared with the manifest, and what migration ran.
///
/// An app shows ``message`` when the document is not simply read-write ("read-only: written by a
/// newer version…", "upgraded from format 1"), and the members the manifest doesn't list
/// (``/FormatVersioning/PackageVerification/unlistedMembers``, a sync engine's conflict copies for instance).
///
/// ```swift
/// let document = try await NoteDocument.open(at: url)
/// if let status = document.formatStatus, status.isReadOnly {
///     print("Read-only: \(status.message)")
/// }
/// ```
public struct FormatStatus: Sendable {
    /// The manifest as it was read from disk, before any migration.
    public let manifestOnDisk: DocumentManifest
    /// What this app may do with the document, from its manifest and the app's
    /// ``/FormatVersioning/FormatDescription`` (never `refused`: a refused document doesn't open).
    public let compatibility: FormatCompatibility
    /// How the package's members compared with its manifest (always complete: an incomplete
    /// package doesn't open).
    public let verification: PackageVerification
    /// The migration steps that ran in memory when the document was opened, in order.
    public let migrationSteps: [String]
    /// The format version the document had on disk, when it was migrated; nil otherwise.
    public let migratedFromFormatVersion: Int?
    /// Whether the next save replaces the document as it was before the migration: a document
    /// with a ``Document/versionStore`` keeps that original as a version (every save keeps the
    /// version it replaces); without one, the original is gone after the save. False once a
    /// save wrote the new version.
    public internal(set) var keepsOriginalOnNextSave: Bool

    /// Whether the document may be read but not saved: `update(_:)` and
    /// ``Document/save()`` refuse with `readOnlyDocument`.
    public var isReadOnly: Bool { !compatibility.allowsWriting }

    /// What the outcome means, in a sentence for people.
    public var message: String { compatibility.message }
}
