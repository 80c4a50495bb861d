#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import FormatVersioning
import SystemPackage
import Foundation

extension VersionStore {
    /// A digest of the contents that names them across machines: the manifest's bytes for a
    /// package with one (it lists every member's SHA-256), the bytes of a file; nil otherwise.
    /// A manifest that records no members says nothing of the contents: nil then too.
    /// A package's manifest unchanged since this process last read it is not read again where
    /// change times are exact (``ContentDigestMemo``).
    func contentDigest(of url: URL, isPackage: Bool) -> String? {
        guard isPackage else { return contentsOfFile(atPath: url.path).map(Digest.sha256) }
        let file = url.appendingPathComponent(manifestName).path
        let span = trustSpan()
        if let status = try? fileSystem.status(of: file, in: AT_FDCWD), status.kind == .regular,
            exactChangeTimes.known(onDevice: status.device),
            let known = ContentDigestMemo.entry(at: file, identity: FileIdentity(status), span: span)
        {
            return membersHave(known.memberSizes, in: url) ? known.digest : nil
        }
        // Read through one descriptor, so that the identity remembered is that of the bytes
        // hashed; a manifest that is a symbolic link is followed, and not remembered.
        let read = readRegularFileWithStatus(atPath: file, using: fileSystem)
        guard let data = read?.data ?? contentsOfFile(atPath: file), let manifest = try? DocumentManifest(jsonData: data, path: file),
            let members = manifest.members
        else { return nil }
        let sizes = members.mapValues(\.size)
        let digest = Digest.sha256(data)
        if let status = read?.status, exactChangeTimes.known(onDevice: status.device) {
            ContentDigestMemo.remember(.init(identity: FileIdentity(status), span: span, memberSizes: sizes, digest: digest), at: file)
        }
        return membersHave(sizes, in: url) ? digest : nil
    }

    /// Whether each member of the package at `url` is a regular file of the size its manifest
    /// records (a member of another size, an edit by another program: the manifest does not
    /// name these contents).
    private func membersHave(_ sizes: [String: Int64], in url: URL) -> Bool {
        sizes.allSatisfy { path, size in
            guard let status = try? fileSystem.status(of: url.path + "/" + path, in: AT_FDCWD) else { return false }
            return status.kind == .regular && status.size == size
        }
    }

    /// Whether every member the package's manifest lists is there with its size and SHA-256.
    func membersMatchManifest(of url: URL) -> Bool {
        let file = url.appendingPathComponent(manifestName)
        guard let data = contentsOfFile(atPath: file.path), let manifest = try? DocumentManifest(jsonData: data, path: file.path),
            let package = try? FileWrapper(contentsOf: url, fileSystem: fileSystem)
        else { return false }
        var hasher = MemberHasher()
        return (try? hasher.verify(package, against: manifest, manifestName: manifestName, packagePath: url.path).isComplete) ?? false
    }
}
