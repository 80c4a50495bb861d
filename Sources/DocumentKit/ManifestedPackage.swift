import Foundation

/// The steps a ``Document`` with a ``/FormatVersioning/FormatDescription`` takes around the subclass's reading and
/// writing: the rules of `Formats/manifest/v1/SPEC.md` on open, the manifest and member records
/// on save. Values in, values out: the document keeps the results.
enum ManifestedPackage {
    /// A package read and checked, migrated in memory if it was older.
    struct Opened {
        var tree: FileWrapper
        var manifest: DocumentManifest
        var status: FormatStatus
    }

    /// Reads the manifest of `tree` and applies the rules, in order: malformed manifest, another
    /// format, a newer reader needed or an unknown required feature (refused), an incomplete
    /// package (refused: still being delivered, or settled after another program's edit), an
    /// older version (migrated in memory).
    ///
    /// - Parameters:
    ///   - hasher: The document's hasher; it learns the digests of the members it checks.
    ///   - settlePeriod: How long an incomplete package must have been left alone to count as
    ///     edited by another program rather than being delivered.
    ///   - acceptingMembers: Opens an incomplete package as it is (for
    ///     ``Document/acceptMembersOnDisk()``); ``FormatStatus/verification`` says what differs.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `corruptData` (malformed manifest, naming it and the
    ///   problem), `unsupportedFormat`, `newerFormat`, `incompletePackage` ("3 of 5 members
    ///   match", a sync may still be delivering it), `modifiedPackage` (the same, settled),
    ///   `migrationFailed`, or the system's error reading a member.
    static func open(
        _ tree: FileWrapper, format: FormatDescription, path: String, hasher: inout MemberHasher,
        settlePeriod: Duration = PackageVerification.defaultSettlePeriod, acceptingMembers: Bool = false
    ) throws(DocumentKitError) -> Opened {
        let manifest = try DocumentManifest(package: tree, manifestName: format.manifestName, packagePath: path)
        let compatibility = format.compatibility(of: manifest, at: path)
        if case .refused(let error) = compatibility { throw error }
        let verification = try hasher.verify(tree, against: manifest, manifestName: format.manifestName, packagePath: path)
        if !acceptingMembers { try verification.checkComplete(settlePeriod: settlePeriod) }
        var document = MigratingDocument(fileWrapper: tree, manifest: manifest)
        if case .needsMigration = compatibility { try format.migrate(&document, at: path) }
        let applied = Set(manifest.appliedMigrations)
        let status = FormatStatus(
            manifestOnDisk: manifest, compatibility: compatibility, verification: verification,
            migrationSteps: document.manifest.appliedMigrations.filter { !applied.contains($0) },
            migratedFromFormatVersion: document.originalFormatVersion,
            keepsOriginalOnNextSave: document.keepsOriginalOnNextSave)
        return Opened(tree: document.fileWrapper, manifest: document.manifest, status: status)
    }

    /// Completes the tree of a save: records the writer and every member in the manifest (members
    /// unchanged since they were read or saved are known by their file's identity, not read
    /// again), then puts the manifest into the tree, last. A manifest whose bytes did not change
    /// keeps its file, so that the save links it.
    ///
    /// Fields, optional features, migrations and record keys the app doesn't know are in
    /// `manifest` as they were read, and are written back byte for byte.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `invalidArgument` if the tree is not a package or the
    ///   manifest breaks the specification; the system's error reading a member.
    static func prepareSave(
        _ tree: FileWrapper, manifest: DocumentManifest, format: FormatDescription, writer: DocumentManifest.Writer,
        path: String, hasher: inout MemberHasher
    ) throws(DocumentKitError) -> (tree: FileWrapper, manifest: DocumentManifest) {
        guard tree.isDirectory else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: path,
                detail: "A document with the format “\(format.identifier)” is a package: the tree to save is a \(tree.kind).")
        }
        var manifest = manifest
        manifest.writer.name = writer.name
        manifest.writer.version = writer.version
        manifest.writer.additionalFields.merge(writer.additionalFields) { _, new in new }
        manifest.members = try hasher.memberRecords(
            of: tree, manifestName: format.manifestName, previous: manifest.members, packagePath: path)
        let data: Data
        do { data = try manifest.jsonData() } catch {
            var error = error
            error.path = path
            throw error
        }
        var tree = tree
        if (try? tree[format.manifestName]?.regularFileContents) != data {
            tree[format.manifestName] = FileWrapper(regularFileWithContents: data)
        }
        return (tree, manifest)
    }
}
