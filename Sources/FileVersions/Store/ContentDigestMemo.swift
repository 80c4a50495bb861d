import DocumentKitSystem
import Synchronization

/// The content digests of package manifests computed in this process (``VersionStore/contentDigest(ofItemAt:)``),
/// by the manifest's path: a `PUT` of `notes serve` asks for its note's digest five times (its
/// tag before and after, the open's base, the new version's id, the event), and each read,
/// parsed and hashed the manifest.
///
/// Used only where the store's file system is known to have exact change times
/// (``ExactChangeTimes``): a manifest whose `stat` (device, inode, size, modification and change
/// times) is the `fstat` of the descriptor it was read through has the bytes read then. Each entry holds for one span of the store's
/// trust horizon at most. The members' sizes are still checked at every use.
enum ContentDigestMemo {
    struct Entry: Sendable, Equatable {
        /// The manifest's identity, from the descriptor it was read through.
        var identity: FileIdentity
        /// The span of the trust horizon it was read in.
        var span: Int64
        /// The size the manifest records for each member, by path.
        var memberSizes: [String: Int64]
        var digest: String
    }

    /// Two generations of 1,024 manifests.
    private static let entries = Mutex(Generations<Entry>(limit: 1_024))

    /// What was remembered of the manifest at `path`, if its identity and span are still these.
    static func entry(at path: String, identity: FileIdentity, span: Int64) -> Entry? {
        entries.withLock { generations in
            guard let entry = generations.value(for: path), entry.identity == identity, entry.span == span else { return nil }
            return entry
        }
    }

    static func remember(_ entry: Entry, at path: String) {
        entries.withLock { $0.insert(entry, for: path) }
    }
}
