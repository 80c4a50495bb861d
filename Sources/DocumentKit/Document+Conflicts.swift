import Foundation
import Synchronization

/// How ``Document/resolveConflict(_:by:)`` settles a conflict version.
public enum ConflictResolution: Sendable, Hashable {
    /// The document stays as it is; the conflict version is marked resolved.
    case keepCurrent
    /// The document takes the conflict version's content and saves it (the current version is
    /// kept in the store).
    case keepConflictVersion
    /// The document merges the conflict version into its content with
    /// ``Document/merge(_:with:ancestor:)``, given the common ancestor when known, and saves.
    case merge
}

extension Document {
    /// The document's conflict versions not resolved yet, newest first: empty without a
    /// ``versionStore``.
    public func unresolvedConflictVersions() throws(DocumentKitError) -> [FileVersion] {
        guard let store = versionStore else { return [] }
        return try store.unresolvedConflictVersions(ofItemAt: fileURL)
    }

    /// Resolves the conflict version `version`: keeps the current content, takes the version's,
    /// or merges the two; saves if the content changed; marks the version resolved, recording
    /// how. Presenters of versions hear `presentedItemDidResolveConflict`.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError``: `invalidArgument` without a version store or when the
    ///   merge fails (the subclass's error as ``/DocumentKitSystem/DocumentKitError/underlyingError``); the
    ///   version's own read errors; the save's. The version stays unresolved then.
    public func resolveConflict(_ version: FileVersion, by resolution: ConflictResolution) async throws(DocumentKitError) {
        guard let store = versionStore else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: fileURL.path, originalIsIntact: true,
                detail: "The document has no version store, so it has no conflict versions to resolve.")
        }
        defer { noteConflictsAfterResolving(version, store: store) }
        switch resolution {
        case .keepCurrent:
            try store.markResolved(version, as: .keptCurrent)
        case .keepConflictVersion:
            let other = try await content(of: version)
            try update { $0 = other }
            try await save()
            try store.markResolved(version, as: .keptThis)
        case .merge:
            let other = try await content(of: version)
            var ancestor: Content?
            if let id = version.ancestorIdentifier, let stored = try store.version(ofItemAt: fileURL, withPersistentIdentifier: id) {
                ancestor = try? await content(of: stored)
            }
            let merged: Content
            do { merged = try merge(content, with: other, ancestor: ancestor) } catch {
                if let error = error as? DocumentKitError { throw error }
                throw DocumentKitError(
                    .invalidArgument, operation: .save, path: fileURL.path, originalIsIntact: true,
                    detail: "Merging version \(version.persistentIdentifier) failed.", underlyingError: SendableDescription(error))
            }
            try update { $0 = merged }
            try await save()
            try store.markResolved(version, as: .merged)
        }
    }

    /// After a resolution: announces it, and leaves ``DocumentState/inConflict`` when no
    /// unresolved conflict is left.
    private func noteConflictsAfterResolving(_ version: FileVersion, store: VersionStore) {
        guard let now = try? store.version(ofItemAt: fileURL, withPersistentIdentifier: version.persistentIdentifier),
            now.isResolved
        else { return }
        post(.conflictResolved(now))
        if (try? store.unresolvedConflictCount(ofItemAt: fileURL)) == 0 {
            changeState { $0.remove(.inConflict) }
        }
    }

    /// The content of a version, read by a document of this type (without coordinating: the
    /// store's files are never written in place).
    public func content(of version: FileVersion) async throws(DocumentKitError) -> Content {
        if version.isCurrent { return content }
        let reader = Self(fileURL: version.url, saveOptions: saveOptions, coordinator: nil)
        try await reader.open()
        return reader.content
    }
}
