import DocumentKitSystem

/// A store of member digests that outlives the process: what lets a new process open a package
/// in which nothing changed without reading its members.
///
/// ``MemberHasher`` asks it once per package for what it recorded there, and uses a digest only
/// for a file whose whole identity (device, inode, size, modification and change times, to the
/// nanosecond) is unchanged and which is older than the digest (see ``CachedMemberDigest/isTrusted``);
/// it records a package's digests in one call after hashing some of them. A cache is never the
/// truth: an implementation that can't read or write answers nothing and records nothing, and
/// never throws. DocumentIndexing's `PersistentMemberDigestCache` is the per-user SQLite one.
public protocol MemberDigestCache: Sendable {
    /// The digests recorded for the members of the package at `packagePath`, in any order;
    /// empty when none are known.
    func digests(forPackageAt packagePath: String) -> [CachedMemberDigest]

    /// Replaces the digests recorded for the package at `packagePath` with `digests`, in one
    /// transaction; an empty list forgets the package.
    func record(_ digests: [CachedMemberDigest], forPackageAt packagePath: String)
}

/// The SHA-256 of a file, the identity the file had when it was read, and the moment before it was read.
public struct CachedMemberDigest: Hashable, Sendable {
    /// The file's identity when it was hashed (its change time is always known).
    public var identity: FileIdentity
    /// The SHA-256 of its contents, as 64 lower-case hexadecimal digits.
    public var sha256: String
    /// The coarse real-time clock, in nanoseconds since 1970, read before the file was read.
    public var referenceTime: Int64

    /// Makes a digest from its parts.
    public init(identity: FileIdentity, sha256: String, referenceTime: Int64) {
        self.identity = identity
        self.sha256 = sha256
        self.referenceTime = referenceTime
    }

    /// Whether the digest may stand for the file's contents while the file keeps ``identity``
    /// (Git's racy-timestamp rule): its change time is known, and its modification and change
    /// times are earlier than ``referenceTime`` by more than the timestamps' granularity
    /// (``DigestClock/margin(for:)``). A write after the reference gets a time no earlier than
    /// it, so it changes the identity; a file written within the same tick as the hashing could
    /// keep it, so it is hashed again next time.
    public var isTrusted: Bool {
        guard let changeTime = identity.changeTime else { return false }
        let limit = referenceTime - DigestClock.margin(for: identity)
        return identity.modificationTime < limit && changeTime < limit
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clock file times come from, for the racy-timestamp rule of ``CachedMemberDigest/isTrusted``.
public enum DigestClock {
    /// The kernel stamps files from its coarse real-time clock: `CLOCK_REALTIME_COARSE`, in
    /// nanoseconds since 1970.
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &time)
        return FileStatus.nanoseconds(time)
    }

    /// One tick of the coarse clock (a jiffy: 1 to 10 ms), in nanoseconds.
    public static let resolution: Int64 = {
        var time = timespec()
        guard clock_getres(CLOCK_REALTIME_COARSE, &time) == 0 else { return 10_000_000 }
        return max(1, FileStatus.nanoseconds(time))
    }()

    /// How much older than the reference a file must be to be trusted: two ticks of the coarse
    /// clock and at least 10 ms; 2 s for a file whose times are whole seconds (a file system with
    /// coarse times, such as FAT, or one that doesn't keep nanoseconds).
    public static func margin(for identity: FileIdentity) -> Int64 {
        let wholeSeconds = identity.modificationTime % 1_000_000_000 == 0
            && (identity.changeTime ?? 0) % 1_000_000_000 == 0
        return wholeSeconds ? 2_000_000_000 : max(2 * resolution, 10_000_000)
    }
}
