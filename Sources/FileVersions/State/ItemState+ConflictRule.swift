import DocumentKitSystem
import Foundation

extension ItemState {
    /// The conflict rule of every save over an item, in the layer that keeps versions: call it
    /// inside the save's coordinated write of `url`, before writing.
    ///
    /// If the item on disk is no longer `base` (the state the saver read or last wrote; see
    /// ``isStill(_:)``), another program saved it meanwhile: with a `store`, what is on disk is
    /// kept as an unresolved conflict version (returned; its ancestor is the stored version with
    /// `base`'s contents, when there is one) and the save may write over it; without a store the
    /// save must not go on, and this throws `changedSinceRead`. Nil when nothing changed, when
    /// there is no base (a new document) or no item.
    public static func keepingConflict(
        ofItemAt url: URL, since base: ItemState?, in store: VersionStore?
    ) throws(DocumentKitError) -> FileVersion? {
        guard let base, let identityNow = ItemState.ofItem(at: url) else { return nil }
        if base.identity.isUnchanged(comparedTo: identityNow.identity) { return nil }  // the common case: one lstat
        let now = ItemState(
            identity: identityNow.identity, digest: store?.contentDigest(ofItemAt: url), members: nil)
        if base.isStill(now) { return nil }
        guard let store else {
            throw DocumentKitError(
                .changedSinceRead, operation: .save, path: url.path, originalIsIntact: true,
                detail: "Another program changed it since this document read it. Give the document a version store to keep both, or open it again.")
        }
        return try store.keepConflictingVersion(ofItemAt: url, ancestorDigest: base.digest)
    }
}
