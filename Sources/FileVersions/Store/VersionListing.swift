import DocumentKitSystem

/// The versions of one item: what ``VersionStore/versions(ofItemAt:)`` finds.
public struct VersionListing: Sendable {
    /// The item as it is now; nil when there is no item.
    public var current: FileVersion?
    /// Every other version, resolved conflicts included, newest first.
    public var others: [FileVersion]
    /// The conflict versions not resolved yet, newest first (also in ``others``).
    public var unresolvedConflicts: [FileVersion] { others.filter(\.isUnresolvedConflict) }
    /// What was wrong: records that are missing or malformed, versions whose files are gone
    /// (each skipped), and an item manifest whose document identifier can't be read (its
    /// versions were then found by name). Each names the path and what is wrong.
    public var problems: [DocumentKitError]
    /// How the store knew which document's versions these are.
    public var identification: Identification = .documentIdentifier

    /// How the store tells which document an item is.
    public enum Identification: Sendable, Hashable {
        /// By the document identifier in the package's manifest: versions follow the document
        /// when it is renamed or moved.
        case documentIdentifier
        /// By the item's path in the library: a file, or a package without a manifest.
        case path
        /// By the item's name: the package's manifest is there but its document identifier
        /// can't be read (a damaged or hand-edited manifest). The versions are those recorded
        /// under the item's file name, of documents no other item in its folder is.
        case name
    }
}
