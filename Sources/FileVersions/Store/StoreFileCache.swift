import DocumentKitSystem
import FormatVersioning
import Synchronization

/// What this process last read from the small files of version stores (`store.json`, each
/// version's `record.json`), by path, with the identity the file had: opening a document reads
/// them again only if they changed. A file is remembered only when it is older than the moment
/// it was read began (the racy-timestamp rule of ``/FormatVersioning/CachedMemberDigest/isTrusted``), so
/// a rewrite in place within the same clock tick is read again.
final class StoreFileCache: Sendable {
    /// The process's cache.
    static let shared = StoreFileCache()
    /// Beyond this many files, the cache starts again (a store of 10,000 versions stays cached).
    private static let limit = 65_536

    private struct Entry: Sendable {
        let identity: FileIdentity
        let value: any Sendable
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The value decoded from the file at `path` when it had `identity`, if it still has it.
    func value<T: Sendable>(at path: String, identity: FileIdentity, as type: T.Type) -> T? {
        entries.withLock { entries in
            guard let entry = entries[path], entry.identity == identity else { return nil }
            return entry.value as? T
        }
    }

    /// Remembers `value`, decoded from the file at `path` whose `identity` was read (by `fstat`
    /// of the open file) after `referenceTime` (``/FormatVersioning/DigestClock/now()``); a file
    /// not older than that is not remembered.
    func remember<T: Sendable>(_ value: T, at path: String, identity: FileIdentity, referenceTime: Int64) {
        let trusted = CachedMemberDigest(identity: identity, sha256: "", referenceTime: referenceTime).isTrusted
        entries.withLock { entries in
            guard trusted else {
                entries[path] = nil
                return
            }
            if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
            entries[path] = Entry(identity: identity, value: value)
        }
    }
}
