#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FilePackages
import Foundation

/// Computes and checks the size and SHA-256 of a package's members, remembering each file's
/// digest by the file's identity so that an unchanged member is hashed once, not at every save.
///
/// A member read from disk and not changed since keeps the identity of its file (device, inode,
/// size, times; see ``/FilePackages/FileWrapper/fileIdentity``), and a save hard-links it into the new package,
/// where it has that identity still. So a save of a 10,000-file package in which one file changed
/// hashes that one file. Keep one hasher per open document:
///
/// ```swift
/// var hasher = MemberHasher()
/// try hasher.verify(tree, against: manifest, manifestName: "Info.json", packagePath: path).checkComplete()
/// // ... later, to save:
/// manifest.members = try hasher.memberRecords(of: newTree, manifestName: "Info.json", previous: manifest.members, packagePath: path)
/// newTree["Info.json"] = FileWrapper(regularFileWithContents: try manifest.jsonData())
/// let saved = try newTree.write(to: url)
/// hasher.rememberDigests(of: saved, members: manifest.members!)
/// ```
public struct MemberHasher: Sendable {
    private struct FileKey: Hashable {
        let device: UInt64
        let inode: UInt64

        init(_ identity: FileIdentity) {
            device = identity.device
            inode = identity.inode
        }
    }

    private struct Digest: Sendable {
        let identity: FileIdentity
        let size: Int64
        let sha256: String
        /// The coarse clock before the file was read, if it was hashed (not known from a save).
        var referenceTime: Int64? = nil
    }

    /// Digests of the files of the package last hashed, verified or saved.
    private var digests: [FileKey: Digest] = [:]

    /// How many files this hasher has read and hashed (the others were known by their identity).
    public private(set) var hashedFileCount = 0

    /// Where digests are kept beyond the process: asked once per verified package for the
    /// digests of files this hasher doesn't know, told once per package what it hashed. Nil
    /// keeps digests in memory only.
    public var digestCache: (any MemberDigestCache)?

    /// A hasher that knows no digests yet, and looks them up in `digestCache` if one is given.
    public init(digestCache: (any MemberDigestCache)? = nil) {
        self.digestCache = digestCache
    }

    /// What one verification takes from and gives to ``digestCache``.
    private struct Persisted {
        /// The cache's digests for the package, by file.
        var known: [FileKey: CachedMemberDigest]
        /// The trusted digests of the members verified, to record.
        var verified: [CachedMemberDigest] = []
        /// Whether `verified` holds something the cache didn't.
        var changed = false
    }

    /// The records of every regular file in `package` except the manifest: what the manifest of a
    /// save lists. Members unchanged since they were hashed, verified or saved are not read again.
    ///
    /// - Parameters:
    ///   - package: The package's tree.
    ///   - manifestName: The manifest member's name (never listed).
    ///   - previous: The records of the manifest being replaced: a member whose size and digest
    ///     are unchanged keeps its record whole, with fields this version doesn't know.
    ///   - packagePath: The package's path, for errors.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` if a member can't be read.
    public mutating func memberRecords(
        of package: FileWrapper, manifestName: String, previous: [String: MemberRecord]? = nil, packagePath: String
    ) throws(DocumentKitError) -> [String: MemberRecord] {
        var found: [FileKey: Digest] = [:]
        var records: [String: MemberRecord] = [:]
        for (path, member) in Self.regularFiles(in: package, manifestName: manifestName) {
            let (size, sha256) = try digest(of: member, at: path, packagePath: packagePath, into: &found)
            if let old = previous?[path], old.size == size, old.sha256 == sha256 {
                records[path] = old
            } else {
                records[path] = MemberRecord(size: size, sha256: sha256)
            }
        }
        digests = found
        return records
    }

    /// Compares the members of `package` with those its manifest lists.
    ///
    /// A member whose size differs is not read. A manifest without a member list gives a
    /// complete verification that lists nothing.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` if a member can't be read (one that disappears meanwhile
    ///   counts as missing instead).
    public mutating func verify(
        _ package: FileWrapper, against manifest: DocumentManifest, manifestName: String, packagePath: String
    ) throws(DocumentKitError) -> PackageVerification {
        var verification = PackageVerification(
            path: packagePath, hasMemberList: manifest.members != nil, listedCount: manifest.members?.count ?? 0,
            matchingCount: 0, missingMembers: [], mismatchedMembers: [], unlistedMembers: [],
            lastChange: Self.lastChange(in: package))
        guard let members = manifest.members else { return verification }
        var found: [FileKey: Digest] = [:]
        found.reserveCapacity(members.count)
        var persisted = digestCache.map { cache in
            Persisted(
                known: Dictionary(
                    cache.digests(forPackageAt: packagePath).map { (FileKey($0.identity), $0) }, uniquingKeysWith: { a, _ in a }))
        }
        // One walk of the tree: each regular file is looked up in the manifest (not each listed
        // path in the tree), which also finds the unlisted ones.
        var seen = 0
        var unlisted: [String] = []
        for (path, member) in Self.regularFiles(in: package, manifestName: manifestName) {
            guard let record = members[path] else {
                unlisted.append(path)
                continue
            }
            seen += 1
            try check(member, at: path, against: record, packagePath: packagePath, into: &verification, &found, &persisted)
        }
        if seen < members.count {
            // Listed paths that are no regular file of the walk: missing, or something else there.
            let files = Set(Self.regularFiles(in: package, manifestName: manifestName).map(\.path))
            for (path, record) in members where !files.contains(path) {
                guard let member = package.fileWrapper(atPath: path) else {
                    verification.missingMembers.append(path)
                    continue
                }
                try check(member, at: path, against: record, packagePath: packagePath, into: &verification, &found, &persisted)
            }
        }
        verification.unlistedMembers = unlisted.sorted()
        verification.missingMembers.sort()
        verification.mismatchedMembers.sort()
        digests = found
        if let persisted, let digestCache, persisted.changed || persisted.verified.count != persisted.known.count {
            digestCache.record(persisted.verified, forPackageAt: packagePath)
        }
        return verification
    }

    /// Compares one member with its record, counting it in `verification` as matching, mismatched
    /// (size, kind or digest) or missing (gone while it was read).
    private mutating func check(
        _ member: FileWrapper, at path: String, against record: MemberRecord, packagePath: String,
        into verification: inout PackageVerification, _ found: inout [FileKey: Digest], _ persisted: inout Persisted?
    ) throws(DocumentKitError) {
        guard member.isRegularFile, member.regularFileSize == record.size else {
            verification.mismatchedMembers.append(path)
            return
        }
        if let provided = member.providedContents, provided.context != nil, provided.expectedSHA256 == nil || provided.expectedSHA256 == record.sha256 {
            // A member of a single-file archive: its size matches and the archive's CRC-32 guards
            // its bytes at every read, so it is not read now (opening stays lazy). What this
            // misses: a member replaced by hand inside the archive with one of the same size.
            provided.expectedSHA256 = record.sha256
            verification.matchingCount += 1
            return
        }
        let digest: (size: Int64, sha256: String)
        do {
            digest = try self.digest(
                of: member, at: path, packagePath: packagePath, into: &found, persisted: &persisted, expected: record.sha256)
        } catch {
            guard error.code == .notFound else { throw error }
            verification.missingMembers.append(path)
            return
        }
        if digest.size == record.size, digest.sha256 == record.sha256 {
            verification.matchingCount += 1
        } else {
            verification.mismatchedMembers.append(path)
        }
    }

    /// Remembers the digests of the members of a package as a save left it (the wrapper
    /// ``/FilePackages/FileWrapper/write(to:options:)`` returned), from the records its manifest was written
    /// with: the next save then reads none of them.
    public mutating func rememberDigests(of savedPackage: FileWrapper, members: [String: MemberRecord]) {
        // One walk of the tree, each file looked up in the records (not each record's path in the tree).
        for (path, member) in Self.regularFiles(in: savedPackage, manifestName: "") {
            guard let record = members[path], let identity = member.fileIdentity, identity.size == record.size else {
                continue
            }
            digests[FileKey(identity)] = Digest(identity: identity, size: record.size, sha256: record.sha256)
        }
    }

    /// After a save: records in ``digestCache`` the members of the package now at `packagePath`
    /// whose digests this hasher knows (call ``rememberDigests(of:members:)`` first), with their
    /// files' identities as they are now. A save's hard links change every member's change time,
    /// so without this the next process would hash the whole package again. A member whose
    /// size, modification time or digest is not the one known, or whose times are not older than
    /// this moment by the margin (see ``CachedMemberDigest/isTrusted``), is not recorded.
    ///
    /// What this can miss beyond the cache's own rule: a member rewritten in place *and* given
    /// its old modification time back between the check that gave its digest and the save's
    /// link, whose change time the link then overwrote.
    public func recordSavedDigests(
        ofPackageAt packagePath: String, members: [String: MemberRecord], using fileSystem: FileSystem = .live
    ) {
        guard let digestCache else { return }
        let referenceTime = DigestClock.now()
        let root: CInt
        do { root = try fileSystem.open(packagePath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch { return }
        // The open folders by path; a member's folder and name are split at its last slash.
        var folders: [Substring: CInt] = ["": root]
        defer { for fd in folders.values { try? fileSystem.close(fd, name: packagePath) } }
        var looks: [(folder: CInt, name: String, record: MemberRecord)] = []
        looks.reserveCapacity(members.count)
        for (path, record) in members {
            let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
            let parent = slash.map { path[..<$0] } ?? ""
            let name = slash.map { path[path.utf8.index(after: $0)...] } ?? path[...]
            guard !name.isEmpty else { continue }
            var folder = folders[parent]
            if folder == nil {
                folder = try? openDirectory(parent.split(separator: "/").map(String.init)[...], from: root, using: fileSystem)
                if let folder { folders[parent] = folder }
            }
            if let folder { looks.append((folder, String(name), record)) }
        }
        // The `fstatat`s (the kernel's path lookups) over the cores for a large package.
        let statuses = concurrentMap(looks.count, threshold: 2_048) { [looks] index in
            try? fileSystem.status(of: looks[index].name, in: looks[index].folder)
        }
        var recorded: [CachedMemberDigest] = []
        recorded.reserveCapacity(looks.count)
        for (look, status) in zip(looks, statuses) {
            guard let status, status.kind == .regular else { continue }
            let record = look.record
            let identity = status.identity
            guard let known = digests[FileKey(identity)], known.size == record.size, known.sha256 == record.sha256,
                known.identity.size == identity.size, known.identity.modificationTime == identity.modificationTime
            else { continue }
            let entry = CachedMemberDigest(identity: identity, sha256: record.sha256, referenceTime: referenceTime)
            if entry.isTrusted { recorded.append(entry) }
        }
        digestCache.record(recorded, forPackageAt: packagePath)
    }

    /// The size and digest of a regular-file member, known by its identity or read and hashed.
    private mutating func digest(
        of member: FileWrapper, at path: String, packagePath: String, into found: inout [FileKey: Digest]
    ) throws(DocumentKitError) -> (size: Int64, sha256: String) {
        var persisted: Persisted?
        return try digest(of: member, at: path, packagePath: packagePath, into: &found, persisted: &persisted, expected: nil)
    }

    /// The same, also looking the file up in the digest cache's records (`persisted`), and
    /// adding its digest there if it may be trusted. A cached digest is used only if it is
    /// `expected` (the manifest's): a damaged cache can't make a member look different, the
    /// file is hashed then.
    private mutating func digest(
        of member: FileWrapper, at path: String, packagePath: String, into found: inout [FileKey: Digest],
        persisted: inout Persisted?, expected: String?
    ) throws(DocumentKitError) -> (size: Int64, sha256: String) {
        if let provided = member.providedContents, let vouched = provided.expectedSHA256, let size = provided.size {
            return (size, vouched)
        }
        let identity = member.fileIdentity
        if let identity, let known = digests[FileKey(identity)] ?? found[FileKey(identity)],
            known.identity.isUnchanged(comparedTo: identity)
        {
            found[FileKey(identity)] = known
            if let referenceTime = known.referenceTime, identity.changeTime != nil, persisted != nil {
                // Hashed earlier by this hasher: the reference is when it was read then.
                let entry = CachedMemberDigest(identity: identity, sha256: known.sha256, referenceTime: referenceTime)
                if entry.isTrusted {
                    if persisted?.known[FileKey(identity)] != entry { persisted?.changed = true }
                    persisted?.verified.append(entry)
                }
            }
            return (known.size, known.sha256)
        }
        if let identity, let cached = persisted?.known[FileKey(identity)], cached.identity == identity, cached.isTrusted,
            cached.sha256 == expected
        {
            found[FileKey(identity)] = Digest(
                identity: identity, size: identity.size, sha256: cached.sha256, referenceTime: cached.referenceTime)
            persisted?.verified.append(cached)
            return (identity.size, cached.sha256)
        }
        let referenceTime = DigestClock.now()
        let hash = SHA256()
        var size: Int64 = 0
        do {
            try member.forEachContentChunk { bytes in
                hash.update(bytes)
                size += Int64(bytes.count)
            }
        } catch {
            var error = error
            error.path = packagePath
            error.step = "hashing the member “\(path)”"
            throw error
        }
        hashedFileCount += 1
        let sha256 = hash.finalize()
        if let identity {
            found[FileKey(identity)] = Digest(identity: identity, size: size, sha256: sha256, referenceTime: referenceTime)
            if persisted != nil, size == identity.size {
                let entry = CachedMemberDigest(identity: identity, sha256: sha256, referenceTime: referenceTime)
                if entry.isTrusted {
                    persisted?.verified.append(entry)
                    persisted?.changed = true
                }
            }
        }
        return (size, sha256)
    }

    /// The newest change to anything in `package` as read (see ``PackageVerification/lastChange``):
    /// the files' change times (their modification times where the change time is unknown) and
    /// the folders' modification times; nil for a package made in memory.
    static func lastChange(in package: FileWrapper) -> Date? {
        var newest: Date?
        func consider(_ date: Date?) {
            if let date, newest.map({ date > $0 }) ?? true { newest = date }
        }
        var folders: [FileWrapper] = [package]
        while let folder = folders.popLast() {
            consider(folder.modificationDate)
            for child in (folder.fileWrappers ?? [:]).values {
                if child.isDirectory {
                    folders.append(child)
                } else if let identity = child.fileIdentity {
                    consider(Date(timeIntervalSince1970: Double(identity.changeTime ?? identity.modificationTime) / 1e9))
                } else {
                    consider(child.modificationDate)
                }
            }
        }
        return newest
    }

    /// Every regular file below `package`, by relative path, except the top-level manifest.
    static func regularFiles(in package: FileWrapper, manifestName: String) -> [(path: String, member: FileWrapper)] {
        var files: [(path: String, member: FileWrapper)] = []
        var folders: [(prefix: String, folder: FileWrapper)] = [("", package)]
        while let (prefix, folder) = folders.popLast() {
            for (name, child) in folder.fileWrappers ?? [:] {
                let path = prefix + name
                if child.isRegularFile, path != manifestName {
                    files.append((path, child))
                } else if child.isDirectory {
                    folders.append((path + "/", child))
                }
            }
        }
        return files
    }
}

extension MemberHasher {
    /// The SHA-256 digest of `bytes`, as 64 lower-case hexadecimal digits (for other layers'
    /// ids and keys).
    package static func sha256(of bytes: UnsafeRawBufferPointer) -> String {
        SHA256.hash(bytes)
    }
}
