import DocumentKitSystem

/// The versions of one item: what ``VersionStore/versions(ofItemAt:)`` finds.
public struct VersionListing: Sendable {
    /// The item as it is now; nil when there is no item.
    public var current: FileVersion?
    /// Every other version, resolved conflicts included, newest first.
    public var others: [FileVersion]
    /// The conflict versions not resolved yet, newest first (also in ``others``).
    public var unresolvedConflicts: [FileVersion] { others.filter(\.isUnresolvedConflict) }
    /// What was wrong in the store: records that are missing or malformed, versions whose files
    /// are gone. Each names the path and what is wrong; the versions concerned are skipped.
    public var problems: [DocumentKitError]
}
