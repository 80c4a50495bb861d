#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file descriptor that is closed when the last reference goes away.
///
/// Used for descriptors that are only read from (directories, files read lazily), whose
/// `close` cannot report anything useful. Files that are written are closed explicitly
/// through ``FileSystem`` so that a deferred write error is seen.
package final class Descriptor: Sendable {
    /// The raw descriptor. Valid for the lifetime of this object.
    package let rawValue: CInt

    /// Takes ownership of `rawValue`.
    package init(owning rawValue: CInt) { self.rawValue = rawValue }

    deinit { Glibc.close(rawValue) }
}

/// Random, unguessable names for temporary items, marked so that leftovers can be recognised.
public enum TemporaryName {
    /// The marker every temporary name of DocumentKit carries: `.dk-`.
    public static let marker = ".dk-"

    /// `.<name>.dk-<purpose>-<12 random letters>`, for an item beside `name`.
    public static func make(for name: String, purpose: String) -> String {
        ".\(name)\(marker)\(purpose)-\(randomSuffix())"
    }

    /// The prefix all temporary names made for `name` start with.
    public static func prefix(for name: String) -> String { ".\(name)\(marker)" }

    /// 12 random characters from a 32-letter alphabet (60 bits), from the system's generator:
    /// five bits each of one 64-bit draw (one `getrandom`, not one per character).
    public static func randomSuffix() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789".utf8)
        var generator = SystemRandomNumberGenerator()
        var bits: UInt64 = generator.next()
        var bytes = [UInt8]()
        bytes.reserveCapacity(12)
        for _ in 0..<12 {
            bytes.append(alphabet[Int(bits & 31)])
            bits >>= 5
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// How much a save guarantees, as GLib's `g_file_set_contents_full` names it.
public enum Durability: Sendable, Hashable {
    /// Atomic: every other process, and this one after a crash of the process, sees the old
    /// contents or the new, never a mix. Nothing is flushed: after a power failure the outcome
    /// depends on the file system.
    case consistent
    /// Atomic and flushed: the new contents and the name change reach the disk before the save
    /// returns (`fsync` of every written file and of every changed directory). The default.
    case durable
    /// Atomic and flushed, as ``durable``, with fewer flushes: what a package save writes (and
    /// the version a version store keeps before it) is flushed by one `syncfs(2)` of the file
    /// system at each point where order matters, not by an `fsync` of each file and folder.
    /// A versioned save of a package flushes 4 times instead of about 10, whatever its size.
    ///
    /// `syncfs` also writes out everything else waiting on that file system, so a save can wait
    /// for another program's writes: for a library on a volume of its own, such as a server's.
    /// Saves of single files and other operations flush as ``durable`` does.
    case durableBatched

    /// Whether the save reaches the disk before it returns (``durable`` or ``durableBatched``).
    public var isDurable: Bool { self != .consistent }

    /// Whether each written file and folder is flushed by itself (``durable``); with
    /// ``durableBatched`` they are flushed together, by the file system's flush that follows.
    public var flushesEachItem: Bool { self == .durable }
}
