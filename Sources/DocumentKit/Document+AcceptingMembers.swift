import Foundation
import Synchronization

/// What ``Document/acceptMembersOnDisk()`` found and did.
public struct MemberAcceptance: Sendable {
    /// How the package's members compared with its manifest before: which were missing,
    /// different or not listed. Complete when there was nothing to accept (nothing was written).
    public var verification: PackageVerification
    /// The package exactly as it was found (its old manifest included), kept in the document's
    /// version store; nil when nothing was written, the document has no store, or (rarely) the
    /// version is in the store but waits to be completed there (a warning is logged; see
    /// ``/FileVersions/VersionStore/save(_:to:options:keepingReplacedAs:isConflict:ancestorIdentifier:)``).
    public var keptVersion: FileVersion?
}

/// A package edited by another program, accepted as it is.
extension Document {
    /// Makes the members of the document's package, as they are on disk now, the document's
    /// current state: writes a manifest that records them, as a save would.
    ///
    /// Call it on a document that is not open, after ``open()`` failed with `modifiedPackage`
    /// (another program edited or damaged members without writing the manifest, and nothing in
    /// the package has changed for ``packageSettlePeriod`` since); then ``open()`` it. Under one
    /// coordinated write of the package:
    /// - a complete package is left alone (the returned verification is complete);
    /// - a package still changing (a sync may be delivering it) is refused with
    ///   `incompletePackage`, and nothing is written: wait, and open it again;
    /// - the members must read as the document's content (``read(from:manifest:)``), else the
    ///   error is `corruptData` (missing or malformed members: restore a version instead) and
    ///   nothing is written; a document this app may not change is refused with `readOnlyDocument`;
    /// - the package as found, old manifest and all, is kept in the ``versionStore`` (origin
    ///   ``/FileVersions/FileVersion/Origin/save``: nothing that was on disk is lost) before the new manifest
    ///   replaces it; without a store only the old manifest is replaced (the members stay).
    ///
    /// Bytes a program changed in place were gone before this runs: the version store's newest
    /// whole version (``/DocumentKitSystem/DocumentKitError/lastCompleteVersionPath`` of the open's error) is what
    /// is left of the state before the edit, and stays in the store.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the package; the package is then untouched.
    @discardableResult
    public func acceptMembersOnDisk() async throws(DocumentKitError) -> MemberAcceptance {
        let requested = fileURL
        guard let format else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: requested.path,
                detail: "Only a document with a format has a manifest whose members can be accepted.")
        }
        guard documentState.contains(.closed) else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: requested.path,
                detail: "The document is open: accept the members on disk before opening it, then open it.")
        }
        let writer = self.writer
        let options = saveOptions
        let (settlePeriod, store) = state.withLock { ($0.packageSettlePeriod, $0.versionStore) }
        return try await perform(coordinating: .writing(requested)) { () throws(DocumentKitError) -> MemberAcceptance in
            try self.coordinated(writing: true, at: requested) { (granted: URL) throws(DocumentKitError) -> MemberAcceptance in
                let url = Self.itemLocation(requested: requested, granted: granted)
                let found = try FileWrapper(contentsOf: url, fileSystem: options.fileSystem)
                // Conflict copies a sync engine left inside are not members: not recorded, not removed.
                let tree = found.withoutConflictCopies(
                    manifestName: format.manifestName, engines: store?.syncEngines ?? ConflictCopyName.Engine.all)
                var hasher = MemberHasher()
                let opened = try ManifestedPackage.open(
                    tree, format: format, path: url.path, hasher: &hasher, acceptingMembers: true)
                let verification = opened.status.verification
                if verification.isComplete { return MemberAcceptance(verification: verification, keptVersion: nil) }
                if !verification.isSettled(settlePeriod: settlePeriod) {
                    try verification.checkComplete(settlePeriod: settlePeriod)
                }
                if opened.status.isReadOnly {
                    throw DocumentKitError(
                        .readOnlyDocument, operation: .save, path: url.path, originalIsIntact: true, detail: opened.status.message)
                }
                do { _ = try self.read(from: opened.tree, manifest: opened.manifest) } catch {
                    var error = Self.wrap(error, operation: .save, path: url.path)
                    error.detail = "The members on disk can't be read as the document, so they were not accepted: "
                        + "restore a version instead. " + (error.detail ?? "")
                    throw error
                }
                let (recorded, _) = try ManifestedPackage.prepareSave(
                    tree, manifest: opened.status.manifestOnDisk, format: format, writer: writer, path: url.path, hasher: &hasher)
                var accepted = found
                accepted[format.manifestName] = recorded[format.manifestName]
                guard let store else {
                    _ = try accepted.write(to: url, options: options)
                    return MemberAcceptance(verification: verification, keptVersion: nil)
                }
                let kept = try store.save(accepted, to: url, options: options, keepingReplacedAs: .save).kept
                return MemberAcceptance(verification: verification, keptVersion: kept)
            }
        }
    }

    /// `error` with ``/DocumentKitSystem/DocumentKitError/lastCompleteVersionPath`` set, for a package refused as
    /// incomplete or modified whose version store holds a whole version of it: the newest one
    /// whose members match its manifest (at most five are checked), named in the message too.
    func withLastCompleteVersion(_ error: DocumentKitError) -> DocumentKitError {
        guard error.code == .incompletePackage || error.code == .modifiedPackage, let store = versionStore, let format,
            let versions = try? store.otherVersions(ofItemAt: URL(fileURLWithPath: error.path))
        else { return error }
        let newestFirst = versions.filter { !$0.isUnresolvedConflict }
            .sorted { ($0.modificationDate ?? .distantPast) > ($1.modificationDate ?? .distantPast) }
        for version in newestFirst.prefix(5) {
            guard let tree = try? FileWrapper(contentsOf: version.url, fileSystem: saveOptions.fileSystem),
                let manifest = try? DocumentManifest(package: tree, manifestName: format.manifestName, packagePath: version.url.path)
            else { continue }
            var hasher = MemberHasher()
            guard let verification = try? hasher.verify(tree, against: manifest, manifestName: format.manifestName, packagePath: version.url.path),
                verification.isComplete
            else { continue }
            var error = error
            error.lastCompleteVersionPath = version.url.path
            error.detail = (error.detail ?? "") + " Its last complete version (\(Self.describe(version))) is kept at “\(version.url.path)”."
            return error
        }
        return error
    }

    private static func describe(_ version: FileVersion) -> String {
        guard let date = version.modificationDate else { return version.persistentIdentifier }
        return "of \(date.formatted(.iso8601))"
    }
}
