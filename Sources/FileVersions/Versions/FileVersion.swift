#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// A saved state of an item: its current version, an older one, or a conflict version, as
/// `NSFileVersion` on Apple platforms.
///
/// Versions other than the current one live in a ``VersionStore``. Two values for the same
/// version of the same item are equal. Get them from ``VersionStore/versions(ofItemAt:)`` and its
/// shortcuts; change them through the store (``VersionStore/markResolved(_:as:)``,
/// ``VersionStore/remove(_:evenIfUnresolvedConflict:)``, ``VersionStore/replaceItem(at:with:keepingCurrentAs:)``).
public struct FileVersion: Sendable, Hashable {
    /// Identifies the version, stable across processes and restarts: keep it, and find the
    /// version again with ``VersionStore/version(ofItemAt:withPersistentIdentifier:)``. For the
    /// current version it names the item's state on disk (it changes with every save).
    public let persistentIdentifier: String
    /// The item this is a version of, as asked.
    public let itemURL: URL
    /// Where the version's contents are: the item itself for the current version, else a file
    /// or package inside the store. Read it; never change it, and never show it to users.
    public let url: URL
    /// Whether this is the item as it is now.
    public let isCurrent: Bool
    /// The item's name when the version was made.
    public let localizedName: String
    /// When the version's contents were last modified.
    public let modificationDate: Date?
    /// The computer that made the version (for an adopted copy, the device or computer the
    /// sync engine names), if known.
    public let localizedNameOfSavingComputer: String?
    /// The user who made the version, if known.
    public let savingUser: String?
    /// How it came to be; nil for the current version.
    public let origin: Origin?
    /// The sync engine whose conflict copy this version was adopted from, if any.
    public let adoptedFrom: String?
    /// Whether the version was made because two writers conflicted.
    public let isConflict: Bool
    /// Whether the conflict was resolved as the store recorded it when this value was made.
    let resolved: Bool
    /// Whether the store may remove the version whenever it prunes.
    public let isDiscardable: Bool
    /// The version this one and the current one both descend from, when known: the common
    /// ancestor a merge starts from.
    public let ancestorIdentifier: String?
    /// How the conflict was resolved, once it is.
    public let resolution: Resolution?

    /// How a conflict was resolved.
    public enum Resolution: String, Sendable, Hashable, Codable, CaseIterable {
        /// The current version was kept; the conflict version stays as an older version.
        case keptCurrent
        /// This conflict version replaced the current one.
        case keptThis
        /// The two were merged into a new current version.
        case merged
    }

    /// Whether the conflict was resolved; always true for a version that isn't a conflict.
    ///
    /// Set it to true once the conflict is resolved, as `NSFileVersion.isResolved`: the store
    /// records it (``markResolved(as:coordinator:)`` with ``Resolution/keptCurrent``, which
    /// throws instead) and this value follows. If the store can't record it (the version is
    /// gone, the store can't be written), the property stays false and the reason is logged.
    /// A resolved conflict can't be made unresolved again: setting false changes nothing, as
    /// Apple asks apps never to do.
    public var isResolved: Bool {
        get { resolved }
        set {
            guard newValue, !resolved else { return }
            do {
                self = try markResolved(as: .keptCurrent)
            } catch {
                VersionStore.logger.error(
                    "Could not mark the conflict version \(persistentIdentifier) of \(itemURL.path) resolved: \(error.localizedDescription)")
            }
        }
    }

    /// Whether the version's contents are on this computer, as `NSFileVersion.hasLocalContents`:
    /// true for the current version and for every version whose contents are in the store; false
    /// when they are missing (the store was damaged or pruned by hand). Apple's non-local
    /// versions, not downloaded yet, have no counterpart: a store is always local.
    public var hasLocalContents: Bool {
        var status = stat()
        return lstat(url.path, &status) == 0
    }

    /// Whether the version is an unresolved conflict: never pruned, never removed by
    /// ``VersionStore/removeOtherVersions(ofItemAt:includingUnresolvedConflicts:)`` unless asked.
    public var isUnresolvedConflict: Bool { isConflict && !resolved }

    /// Two values are equal when they name the same version of the same item.
    public static func == (lhs: FileVersion, rhs: FileVersion) -> Bool {
        lhs.persistentIdentifier == rhs.persistentIdentifier && lhs.url == rhs.url && lhs.resolved == rhs.resolved
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(persistentIdentifier)
        hasher.combine(url)
        hasher.combine(resolved)
    }
}
