#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation

/// The state of an item on disk as a document read or wrote it, and the one place that answers
/// "is this still the item I read?".
///
/// It holds the item's ``/DocumentKitSystem/FileIdentity`` (device, inode, size, modification and change times), the
/// digest of its contents when a version store can name them (``VersionStore/contentDigest(ofItemAt:)``),
/// and, for a document that presents its file, the identities of everything in a package (a
/// member written in place changes no identity of the package folder itself).
public struct ItemState: Sendable, Equatable {
    /// The item's own identity.
    public let identity: FileIdentity
    /// The digest naming its contents; nil when unknown.
    public let digest: String?
    /// The identities of the item and of everything in it, when captured; nil otherwise.
    public let members: String?

    /// Captures the state of the item at `url`; nil when there is none. `digest` names the
    /// contents (pass the version store's, or nil), `includingMembers` adds the identities of a
    /// package's members (a `stat` of each, at most ``/FilePackages/FileWrapper/maximumDepth`` levels deep).
    public static func ofItem(at url: URL, digest: ((URL) -> String?)? = nil, includingMembers: Bool = false) -> ItemState? {
        guard let status = try? FileSystem.live.status(of: url.path, in: AT_FDCWD) else { return nil }
        return ItemState(
            identity: status.identity, digest: digest?(url), members: includingMembers ? memberIdentities(of: url) : nil)
    }

    /// Whether `other` is the same file, unmodified: the same identity but perhaps for its change
    /// time, which a rename, `chmod` or a hard link (the version store's) moves.
    public func isSameFile(as other: ItemState) -> Bool {
        identity.isUnchanged(comparedTo: other.identity.withoutChangeTime)
    }

    /// Whether the item, found in state `now`, is still this state: the same file untouched (and
    /// the same members, where both know them); else, where both digests are known, the same
    /// contents (written again, or only its metadata changed: a sync engine's temporary file
    /// inside a package); else, without digests, the same file with only its change time moved
    /// (an undone swap renames the original back).
    public func isStill(_ now: ItemState) -> Bool {
        let membersAgree = members == nil || now.members == nil || members == now.members
        if identity.isUnchanged(comparedTo: now.identity) && membersAgree { return true }
        if let digest, let other = now.digest { return digest == other }
        return isSameFile(as: now) && membersAgree
    }

    /// The same state with `digest` as the digest of its contents.
    public func withDigest(_ digest: String?) -> ItemState {
        ItemState(identity: identity, digest: digest, members: members)
    }

    /// This state at a new place: the same file, renamed (a move is not a change of contents).
    public func moved(to url: URL) -> ItemState? {
        guard let now = ItemState.ofItem(at: url, includingMembers: members != nil), isSameFile(as: now) else { return nil }
        return ItemState(identity: now.identity, digest: digest, members: now.members)
    }

    /// The identities (device, inode, modification time, size) of the item and, for a folder or
    /// package, of everything in it; not the change times (the version store's hard links move
    /// them without changing anything). Depth first in name order, without recursion; folders
    /// deeper than `FileWrapper.maximumDepth` are not entered (no document reads them either).
    static func memberIdentities(of url: URL) -> String? {
        var parts: [String] = []
        var pending: [(path: String, relative: String, depth: Int)] = [(url.path, "", 0)]
        while let (path, relative, depth) = pending.popLast() {
            guard let status = try? FileSystem.live.status(of: path, in: AT_FDCWD) else {
                if depth == 0 { return nil }
                continue
            }
            parts.append("\(relative)|\(status.device)|\(status.inode)|\(status.modificationTime)|\(status.size)")
            guard status.kind == .directory, depth <= FileWrapper.maximumDepth,
                let fd = try? FileSystem.live.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            else { continue }
            let folder = Descriptor(owning: fd)
            guard let names = try? FileSystem.live.contentsOfDirectory(folder.rawValue, name: path) else { continue }
            for name in names.sorted().reversed() { pending.append((path + "/" + name, relative + "/" + name, depth + 1)) }
        }
        return parts.joined(separator: "\n")
    }
}
