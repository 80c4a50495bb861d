#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import FormatVersioning
import Foundation
import Logging
import SystemPackage

extension VersionStore {
    /// Adopts the conflict copies that sync engines left in `folder` (see ``ConflictCopyName``)
    /// as unresolved conflict versions of the documents they belong to.
    ///
    /// - A copy beside a document (`notes.sync-conflict-20261122-101500-ABCDEFG.txt` next to
    ///   `notes.txt`, or a copied package) becomes a conflict version of that document.
    /// - Copies that a file-by-file engine made of a package's members, inside the package
    ///   (`trip.note/body.sync-conflict-….md`, the manifest likewise), are assembled into one
    ///   conflict version of the whole package: the current members with the copies in their
    ///   place. Copies made within a minute of each other, one per member, belong together.
    ///   They are never read as part of the current package.
    ///
    /// The copies are then removed from the folder (moved into the store), unless
    /// `leavingCopiesInPlace`: adopting the same copies again gives the same versions. Adoption
    /// is deterministic: the same copies adopted on two machines give byte-identical records,
    /// so a store that a sync engine shares converges. A copy whose document is gone is left
    /// alone. Each document is changed under a coordinated write.
    ///
    /// - Returns: The versions adopted.
    @discardableResult
    public func adoptConflictCopies(in folder: URL, leavingCopiesInPlace: Bool = false) throws(DocumentKitError) -> [FileVersion] {
        let names: [String]
        do { names = try itemNames(inFolderAtPath: folder.path) } catch {
            throw DocumentKitError(error, operation: .read, path: folder.path, step: "listing the folder for conflict copies")
        }
        return adoptConflictCopies(in: folder, names: names, leavingCopiesInPlace: leavingCopiesInPlace)
    }

    /// Adopts the conflict copies among the items `names` of `folder` only, as
    /// ``adoptConflictCopies(in:leavingCopiesInPlace:)`` does for every item: each name that is a
    /// copy of a sibling document, and the copies of members inside each named package. For an
    /// app that knows what changed since its last look (a document index), so that it doesn't
    /// walk every package of a library. A name that isn't there is skipped.
    ///
    /// - Returns: The versions adopted.
    @discardableResult
    public func adoptConflictCopies(in folder: URL, names: [String], leavingCopiesInPlace: Bool = false) -> [FileVersion] {
        var adopted: [FileVersion] = []
        let folderPath = folder.path
        for name in Set(names).sorted() where name != Self.folderName && !ConflictCopyName.isEngineTemporary(name) && !name.contains("/") {
            // Paths, not URLs, until something is found: a library of 100,000 notes without copies.
            let path = folderPath + "/" + name
            guard let isFolder = kind(atPath: path) else { continue }
            if ConflictCopyName(parsing: name) == nil {
                if isFolder && !name.hasPrefix(".") { adopted += adoptMemberCopies(inPackageAtPath: path, leavingInPlace: leavingCopiesInPlace) }
                continue
            }
            let url = folder.appendingPathComponent(name)
            if let copy = itemCopy(named: name, in: folder) {
                do throws(DocumentKitError) {
                    adopted.append(try adoptItemCopy(copy, at: url, item: folder.appendingPathComponent(copy.originalName), leavingInPlace: leavingCopiesInPlace))
                } catch {
                    Self.logger.warning("Couldn't adopt the conflict copy \(url.path): \(error.description)")
                }
            } else if isFolder && !name.hasPrefix(".") {
                adopted += adoptMemberCopies(inPackageAtPath: path, leavingInPlace: leavingCopiesInPlace)
            }
        }
        return adopted
    }

    /// Adopts the conflict copies of members inside the package at `path`, a version per group.
    private func adoptMemberCopies(inPackageAtPath path: String, leavingInPlace: Bool) -> [FileVersion] {
        let copies = memberCopies(inPackageAtPath: path)
        guard !copies.isEmpty else { return [] }
        let url = URL(fileURLWithPath: path, isDirectory: true)
        var adopted: [FileVersion] = []
        for group in Self.group(copies) {
            do throws(DocumentKitError) {
                adopted.append(try adoptMemberCopies(group, package: url, leavingInPlace: leavingInPlace))
            } catch {
                Self.logger.warning("Couldn't adopt the conflict copies in \(url.path): \(error.description)")
            }
        }
        return adopted
    }

    /// The conflict copies a folder's own check would find, without adopting them: for counting.
    public func pendingConflictCopies(in folder: URL) -> [URL] {
        guard let names = try? itemNames(inFolderAtPath: folder.path) else { return [] }
        var found: [URL] = []
        for name in names.sorted() where name != Self.folderName {
            let url = folder.appendingPathComponent(name)
            if itemCopy(named: name, in: folder) != nil {
                found.append(url)
            } else if isDirectory(url) && !name.hasPrefix(".") {
                found += memberCopies(in: url).map(\.url)
            }
        }
        return found
    }

    /// A conflict copy of one member of a package.
    struct MemberCopy {
        var url: URL
        /// Path components from the package to the copy's folder.
        var folder: [String]
        var name: ConflictCopyName
        var date: Date
        var memberPath: String { (folder + [name.originalName]).joined(separator: "/") }
    }

    /// The item `name` of `folder` (a library folder) as a conflict copy of a sibling document, by
    /// the rule of ``ConflictCopyName/init(parsing:isFolder:engines:originalIsFolder:)``.
    func itemCopy(named name: String, in folder: URL) -> ConflictCopyName? {
        ConflictCopyName(parsing: name, isFolder: isDirectory(folder.appendingPathComponent(name)), engines: syncEngines) {
            kind(of: folder.appendingPathComponent($0))
        }
    }

    /// Conflict copies of members anywhere inside `package` (only in packages with a manifest: a
    /// plain folder of documents is not a package). A copy is a file beside the member it is a
    /// copy of, never a member the manifest lists (an attachment named `results.conflict1` is one).
    ///
    /// The manifest is read only when a name looks like a copy: a library of notes without any
    /// costs a `readdir` and a `stat` per name.
    func memberCopies(in package: URL) -> [MemberCopy] { memberCopies(inPackageAtPath: package.path) }

    /// ``memberCopies(in:)`` of the package at `packagePath`.
    func memberCopies(inPackageAtPath packagePath: String) -> [MemberCopy] {
        var found: [MemberCopy] = []
        var listedMembers: Set<String>?
        let package = URL(fileURLWithPath: packagePath, isDirectory: true)
        func listed() -> Set<String> {
            if let listedMembers { return listedMembers }
            let members = self.listedMembers(ofPackageAt: package)
            listedMembers = members
            return members
        }
        func walk(_ folderPath: String, _ components: [String]) {
            // No deeper than a package may be (a deeper one is refused when read).
            guard components.count <= FileWrapper.maximumDepth, let entries = try? itemEntries(inFolderAtPath: folderPath) else {
                return
            }
            for (name, entryKind) in entries.sorted(by: { $0.name < $1.name }) where !ConflictCopyName.isEngineTemporary(name) {
                let itemPath = folderPath + "/" + name
                guard ConflictCopyName(parsing: name) != nil else {
                    // No engine's copy: a member, or a folder to look into (the listing's kind,
                    // or a `stat` where the file system doesn't tell it).
                    if !name.hasPrefix("."), entryKind.map({ $0 == .directory }) ?? (kind(atPath: itemPath) == true) {
                        walk(itemPath, components + [name])
                    }
                    continue
                }
                let folder = URL(fileURLWithPath: folderPath, isDirectory: true)
                let url = URL(fileURLWithPath: itemPath)
                let path = (components + [name]).joined(separator: "/")
                let copy = ConflictCopyName(parsing: name, isFolder: isDirectory(url), engines: syncEngines) {
                    kind(of: folder.appendingPathComponent($0))
                }
                if let copy, !isDirectory(url), !listed().contains(path) {
                    found.append(MemberCopy(url: url, folder: components, name: copy, date: copy.date ?? modificationDate(of: url)))
                } else if isDirectory(url) && !name.hasPrefix(".") {
                    walk(itemPath, components + [name])
                }
            }
        }
        guard kind(atPath: packagePath + "/" + manifestName) != nil else { return [] }
        walk(packagePath, [])
        return found
    }

    /// The members the manifest of the package at `package` lists (relative paths); empty when it
    /// lists none or can't be read.
    func listedMembers(ofPackageAt package: URL) -> Set<String> {
        guard let data = contentsOfFile(atPath: package.appendingPathComponent(manifestName).path) else { return [] }
        let tree = FileWrapper(directoryWithFileWrappers: [manifestName: FileWrapper(regularFileWithContents: data)])
        return Set((try? DocumentManifest(package: tree, manifestName: manifestName, packagePath: package.path))?.members?.keys ?? [:].keys)
    }

    /// Splits member copies into conflicts: sorted by time, a new group starts after a gap of
    /// more than a minute from the group's first copy, or at a second copy of the same member.
    static func group(_ copies: [MemberCopy]) -> [[MemberCopy]] {
        let sorted = copies.sorted { ($0.date, $0.url.path) < ($1.date, $1.url.path) }
        var groups: [[MemberCopy]] = []
        for copy in sorted {
            if let first = groups.last?.first, copy.date.timeIntervalSince(first.date) <= 60,
                !groups[groups.count - 1].contains(where: { $0.memberPath == copy.memberPath })
            {
                groups[groups.count - 1].append(copy)
            } else {
                groups.append([copy])
            }
        }
        return groups
    }

    /// Adopts a copy of a whole document.
    private func adoptItemCopy(_ copy: ConflictCopyName, at url: URL, item: URL, leavingInPlace: Bool) throws(DocumentKitError) -> FileVersion {
        try coordinated(writing: item) { () throws(DocumentKitError) in
            let isPackage = isDirectory(url)
            let content = contentDigest(of: url, isPackage: isPackage) ?? ""
            var draft = VersionDraft(itemURL: item, source: url, origin: .adoptedCopy, isConflict: true, ancestor: nil)
            draft.digest = Digest.sha256(Data((copy.copyName + "\n" + content).utf8))
            draft.modified = copy.date ?? modificationDate(of: url)
            draft.host = .some(copy.engine == .syncthing ? nil : copy.user)
            draft.user = .some(copy.user)
            draft.adoptedFrom = VersionRecord.AdoptedFrom(
                engine: copy.engine.rawValue, names: [relativePath(of: url)], devices: copy.device.map { [$0] })
            draft.moving = !leavingInPlace
            return try makeVersion(draft)
        }
    }

    /// Assembles one conflict version of `package` from copies of its members.
    private func adoptMemberCopies(_ group: [MemberCopy], package: URL, leavingInPlace: Bool) throws(DocumentKitError) -> FileVersion {
        try coordinated(writing: package) { () throws(DocumentKitError) in
            var tree = try FileWrapper(contentsOf: package).withoutConflictCopies(manifestName: manifestName, engines: syncEngines)
            var identity = ""
            for copy in group.sorted(by: { $0.memberPath < $1.memberPath }) {
                let member = try FileWrapper(contentsOf: copy.url)
                Self.set(member, at: copy.folder + [copy.name.originalName], in: &tree)
                identity += copy.memberPath + " " + copy.name.copyName + " " + (contentDigest(of: copy.url, isPackage: false) ?? "") + "\n"
            }
            var draft = VersionDraft(itemURL: package, source: package, origin: .adoptedCopy, isConflict: true, ancestor: nil)
            draft.tree = tree
            draft.digest = Digest.sha256(Data(identity.utf8))
            draft.modified = group.map(\.date).max()
            let users = Set(group.compactMap(\.name.user)).sorted()
            draft.host = .some(nil)
            draft.user = .some(users.isEmpty ? nil : users.joined(separator: ", "))
            let devices = Set(group.compactMap(\.name.device)).sorted()
            draft.adoptedFrom = VersionRecord.AdoptedFrom(
                engine: group[0].name.engine.rawValue, names: group.map { relativePath(of: $0.url) }.sorted(),
                devices: devices.isEmpty ? nil : devices)
            let version = try makeVersion(draft)
            if !leavingInPlace {
                for copy in group { try? removeItem(copy.url.path, in: AT_FDCWD, using: fileSystem) }
            }
            return version
        }
    }

    /// Puts `member` at `path` in `tree`, creating folders on the way.
    static func set(_ member: FileWrapper, at path: [String], in tree: inout FileWrapper) {
        guard let first = path.first else { return }
        if path.count == 1 {
            tree[first] = member
            return
        }
        var child = tree[first].flatMap { $0.isDirectory ? $0 : nil } ?? FileWrapper(directoryWithFileWrappers: [:])
        set(member, at: Array(path.dropFirst()), in: &child)
        tree[first] = child
    }

    func relativePath(of url: URL) -> String {
        let base = libraryURL.path.hasSuffix("/") ? libraryURL.path : libraryURL.path + "/"
        return url.path.hasPrefix(base) ? String(url.path.dropFirst(base.count)) : url.lastPathComponent
    }

    /// Whether the item at `url` is a folder (not following a symbolic link); nil if there is none.
    func kind(of url: URL) -> Bool? { kind(atPath: url.path) }

    /// Whether the item at `path` is a folder (not following a link); nil if there is none.
    func kind(atPath path: String) -> Bool? {
        guard let status = try? fileSystem.status(of: path, in: AT_FDCWD) else { return nil }
        return status.kind == .directory
    }

    func isDirectory(_ url: URL) -> Bool { kind(atPath: url.path) == true }

    func modificationDate(of url: URL) -> Date {
        guard let status = try? fileSystem.status(of: url.path, in: AT_FDCWD) else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: Double(status.modificationTime) / 1e9)
    }

    /// The names in the folder at `path` (following a link to it, as a listing by path does).
    func itemNames(inFolderAtPath path: String) throws(Errno) -> [String] {
        let fd = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { try? fileSystem.close(fd, name: path) }
        return try fileSystem.contentsOfDirectory(fd, name: path)
    }

    /// The names in the folder at `path` with their kinds as the listing tells them (nil where it doesn't).
    func itemEntries(inFolderAtPath path: String) throws(Errno) -> [(name: String, kind: FileStatus.Kind?)] {
        let fd = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { try? fileSystem.close(fd, name: path) }
        return try fileSystem.entriesOfDirectory(fd, name: path)
    }
}

extension FileWrapper {
    /// The package without the conflict copies of members and the temporary files that sync
    /// engines leave in it, at any depth: what the package holds of its own. Documents read
    /// packages this way, so a copy is never read as part of the current version.
    ///
    /// A file is a copy by the rule of ``ConflictCopyName/init(parsing:isFolder:engines:originalIsFolder:)``
    /// (a file of one of `engines`' schemes beside its original), and only if the manifest
    /// `manifestName` (when given and readable) doesn't list it as a member: pass the document's
    /// manifest name whenever it has one, or a member named like a copy is left out.
    public func withoutConflictCopies(
        manifestName: String?, engines: Set<ConflictCopyName.Engine> = ConflictCopyName.Engine.all
    ) -> FileWrapper {
        var listed: Set<String> = []
        if let manifestName, let manifest = try? DocumentManifest(package: self, manifestName: manifestName, packagePath: "") {
            listed = Set(manifest.members?.keys ?? [:].keys)
        }
        return withoutConflictCopies(at: [], listed: listed, engines: engines)
    }

    private func withoutConflictCopies(at path: [String], listed: Set<String>, engines: Set<ConflictCopyName.Engine>) -> FileWrapper {
        guard let children = fileWrappers else { return self }
        var result = self
        for (name, child) in children {
            let isCopy = { () -> Bool in
                guard !child.isDirectory, !listed.contains((path + [name]).joined(separator: "/")) else { return false }
                return ConflictCopyName(parsing: name, isFolder: false, engines: engines) { children[$0]?.isDirectory } != nil
            }
            if ConflictCopyName.isEngineTemporary(name) || isCopy() {
                result[name] = nil
            } else if child.isDirectory {
                result[name] = child.withoutConflictCopies(at: path + [name], listed: listed, engines: engines)
            }
        }
        return result
    }
}
