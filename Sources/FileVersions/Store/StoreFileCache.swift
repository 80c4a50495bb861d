import DocumentKitSystem
import FormatVersioning
import Synchronization

/// What this process last read from the small files of a version store (`store.json`, each
/// version's `record.json`), by path, with the identity the file had: opening a document reads
/// them again only if they changed. A file is remembered only when it is older than the moment
/// it was read began (the racy-timestamp rule of ``/FormatVersioning/CachedMemberDigest/isTrusted``), so
/// a rewrite in place within the same clock tick is read again.
///
/// The cache is bounded, for a process that keeps versions for months: it holds two
/// generations of at most ``generationLimit`` files each. New files go into the young one; when
/// it is full it becomes the old one and the oldest generation is dropped; a file found in the
/// old generation moves back to the young one. Files read again and again stay; files read once
/// (a version kept long ago) leave after two generations.
final class StoreFileCache: Sendable {
    /// Files per generation (a store whose documents keep up to this many versions each stays cached).
    static let generationLimit = 2_048

    private struct Entry: Sendable {
        let identity: FileIdentity
        let value: any Sendable
    }

    private struct Generations {
        var young: [String: Entry] = [:]
        var old: [String: Entry] = [:]

        mutating func insert(_ entry: Entry, at path: String, limit: Int) {
            young[path] = entry
            if young.count >= limit {
                old = young
                young = [:]
            }
        }
    }

    private let generations = Mutex(Generations())
    private let limit: Int

    /// A cache of at most two generations of `generationLimit` files.
    init(generationLimit: Int = StoreFileCache.generationLimit) {
        limit = generationLimit
    }

    /// How many files the cache holds (for tests: it must stay bounded).
    var count: Int { generations.withLock { $0.young.count + $0.old.count } }

    /// The value decoded from the file at `path` when it had `identity`, if it still has it.
    func value<T: Sendable>(at path: String, identity: FileIdentity, as type: T.Type) -> T? {
        generations.withLock { generations in
            if let entry = generations.young[path] {
                return entry.identity == identity ? entry.value as? T : nil
            }
            guard let entry = generations.old.removeValue(forKey: path), entry.identity == identity else { return nil }
            generations.insert(entry, at: path, limit: limit)
            return entry.value as? T
        }
    }

    /// Remembers `value`, decoded from the file at `path` whose `identity` was read (by `fstat`
    /// of the open file) after `referenceTime` (``/FormatVersioning/DigestClock/now()``); a file
    /// not older than that is not remembered.
    func remember<T: Sendable>(_ value: T, at path: String, identity: FileIdentity, referenceTime: Int64) {
        let trusted = CachedMemberDigest(identity: identity, sha256: "", referenceTime: referenceTime).isTrusted
        generations.withLock { generations in
            generations.old[path] = nil
            guard trusted else {
                generations.young[path] = nil
                return
            }
            generations.insert(Entry(identity: identity, value: value), at: path, limit: limit)
        }
    }
}
