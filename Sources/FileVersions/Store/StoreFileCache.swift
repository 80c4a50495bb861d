import DocumentKitSystem
import FormatVersioning
import Synchronization

/// What this process last read from the small files of a version store (`store.json`, each
/// version's `record.json`), by path, with the identity the file had: opening a document reads
/// them again only if they changed. A file is remembered only when it is older than the moment
/// it was read began (the racy-timestamp rule of ``/FormatVersioning/CachedMemberDigest/isTrusted``), so
/// a rewrite in place within the same clock tick is read again.
///
/// The cache is bounded (``Generations``): at most two generations of ``generationLimit`` files.
final class StoreFileCache: Sendable {
    /// Files per generation: a document with up to this many versions stays cached while it is
    /// saved again and again; 1,024 records (about 1 MB) at most, which a long-running server
    /// fills within its first thousand saves and then holds (its memory stays flat).
    static let generationLimit = 512

    private struct Entry: Sendable {
        let identity: FileIdentity
        let value: any Sendable
    }

    private let generations: Mutex<Generations<Entry>>

    /// A cache of at most two generations of `generationLimit` files.
    init(generationLimit: Int = StoreFileCache.generationLimit) {
        generations = Mutex(Generations(limit: generationLimit))
    }

    /// How many files the cache holds (for tests: it must stay bounded).
    var count: Int { generations.withLock { $0.count } }

    /// The value decoded from the file at `path` when it had `identity`, if it still has it.
    func value<T: Sendable>(at path: String, identity: FileIdentity, as type: T.Type) -> T? {
        generations.withLock { generations in
            guard let entry = generations.value(for: path), entry.identity == identity else { return nil }
            return entry.value as? T
        }
    }

    /// Forgets what was remembered at `path`.
    func forget(at path: String) {
        generations.withLock { $0.removeValue(for: path) }
    }

    /// Remembers `value`, decoded from the file at `path` whose `identity` was read (by `fstat`
    /// of the open file) after `referenceTime` (``/FormatVersioning/DigestClock/now()``); a file
    /// not older than that is not remembered.
    func remember<T: Sendable>(_ value: T, at path: String, identity: FileIdentity, referenceTime: Int64) {
        let trusted = CachedMemberDigest(identity: identity, sha256: "", referenceTime: referenceTime).isTrusted
        generations.withLock { generations in
            if trusted {
                generations.insert(Entry(identity: identity, value: value), for: path)
            } else {
                generations.removeValue(for: path)
            }
        }
    }
}
