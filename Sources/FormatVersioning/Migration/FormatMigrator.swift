import DocumentKitSystem
import FilePackages

/// A document being migrated: its file tree and its manifest, changed in memory only.
public struct MigratingDocument: Sendable {
    /// The document's tree (a package's folder, or a single file). Steps change it like any value.
    public var fileWrapper: FileWrapper
    /// The document's manifest. Steps may change the format's own fields and features; the
    /// versions and the list of applied migrations are kept by the migrator.
    public var manifest: DocumentManifest
    /// Whether the next save must keep the document as it was before the migration (as a version
    /// of it, in the version store): set once a migration changed anything.
    public internal(set) var keepsOriginalOnNextSave = false
    /// The format version the document had before it was migrated; nil if it was not.
    public internal(set) var originalFormatVersion: Int?

    /// A document read from disk, not migrated yet.
    public init(fileWrapper: FileWrapper, manifest: DocumentManifest) {
        self.fileWrapper = fileWrapper
        self.manifest = manifest
    }
}

/// The ordered, named migration steps of a format, in the manner of GRDB's `DatabaseMigrator`.
///
/// Register every step an app ever shipped, in order, and never change one once shipped: a
/// document records the identifiers of the steps applied to it (``DocumentManifest/appliedMigrations``),
/// and a step runs only on documents that haven't had it.
///
/// ```swift
/// var migrator = FormatMigrator()
/// migrator.registerMigration("v2-add-tags") { document in
///     document.manifest.additionalFields["tags"] = try RawJSONValue(jsonText: "[]")
/// }
/// ```
public struct FormatMigrator: Sendable {
    /// A step: changes the document in memory, or throws to stop the migration.
    public typealias Migration = @Sendable (inout MigratingDocument) throws -> Void

    private struct Step: Sendable {
        let identifier: String
        let migrate: Migration
    }

    private var steps: [Step] = []

    /// A migrator with no steps.
    public init() {}

    /// Adds a step after those registered before.
    ///
    /// Registering an identifier twice, or one that is empty, longer than 255 bytes or holds a
    /// control character, is a programming error.
    public mutating func registerMigration(_ identifier: String, migrate: @escaping Migration) {
        precondition(!migrations.contains(identifier), "FormatMigrator: the migration “\(identifier)” is registered twice")
        if let problem = ManifestRules.nameProblem(identifier) {
            preconditionFailure("FormatMigrator: the migration identifier “\(identifier)” \(problem)")
        }
        steps.append(Step(identifier: identifier, migrate: migrate))
    }

    /// The identifiers of the registered steps, in order.
    public var migrations: [String] { steps.map(\.identifier) }

    /// The registered steps the document has had, in registration order.
    public func appliedMigrations(of manifest: DocumentManifest) -> [String] {
        let applied = Set(manifest.appliedMigrations)
        return migrations.filter(applied.contains)
    }

    /// The registered steps the document hasn't had yet, in the order they would run.
    public func pendingMigrations(for manifest: DocumentManifest) -> [String] {
        let applied = Set(manifest.appliedMigrations)
        return migrations.filter { !applied.contains($0) }
    }

    /// Whether the document has had every registered step (false: it is too old, and needs them).
    public func hasCompletedMigrations(_ manifest: DocumentManifest) -> Bool {
        pendingMigrations(for: manifest).isEmpty
    }

    /// Whether the document has had steps this migrator doesn't know: a newer version of the app
    /// migrated it (it is too new for this one).
    public func hasBeenSuperseded(_ manifest: DocumentManifest) -> Bool {
        !unknownMigrations(of: manifest).isEmpty
    }

    /// The applied steps this migrator doesn't know, in the order they were applied.
    public func unknownMigrations(of manifest: DocumentManifest) -> [String] {
        let known = Set(migrations)
        return manifest.appliedMigrations.filter { !known.contains($0) }
    }

    /// Runs the pending steps in order, recording each in the manifest's applied migrations.
    ///
    /// All or nothing: if a step throws, `document` is left as it was.
    ///
    /// - Parameters:
    ///   - document: The document to migrate, in memory.
    ///   - path: The document's path, for errors.
    /// - Returns: The identifiers of the steps that ran.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `migrationFailed` naming the step, with the
    ///   step's error as its underlying error.
    @discardableResult
    public func migrate(_ document: inout MigratingDocument, at path: String) throws(DocumentKitError) -> [String] {
        let applied = Set(document.manifest.appliedMigrations)
        var migrated = document
        var ran: [String] = []
        for step in steps where !applied.contains(step.identifier) {
            do { try step.migrate(&migrated) } catch {
                throw DocumentKitError(
                    .migrationFailed, operation: .open, path: path, step: "migrating it with “\(step.identifier)”",
                    originalIsIntact: true,
                    underlyingError: (error as? DocumentKitError) ?? SendableDescription(error))
            }
            migrated.manifest.appliedMigrations.append(step.identifier)
            ran.append(step.identifier)
        }
        if !ran.isEmpty {
            migrated.keepsOriginalOnNextSave = true
            migrated.originalFormatVersion = migrated.originalFormatVersion ?? document.manifest.formatVersion
        }
        document = migrated
        return ran
    }
}
