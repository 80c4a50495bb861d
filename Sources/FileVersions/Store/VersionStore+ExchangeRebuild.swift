#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import SystemPackage

extension VersionStore {
    /// Whether the package an exchange put at `entry/item` has a file with other hard links (a
    /// member the save linked into the document's new package): its rebuild would change that
    /// member's change time in the document. Stops at the first; true when it can't tell.
    func sharesMembers(_ entry: URL) -> Bool {
        var pending: [(path: String, depth: Int)] = [(entry.path + "/item", 0)]
        while let (path, depth) = pending.popLast() {
            guard let folder = try? openFolder(URL(fileURLWithPath: path, isDirectory: true), "looking at the replaced package"),
                let names = try? fileSystem.contentsOfDirectory(folder.rawValue, name: path)
            else { return true }
            for name in names {
                guard let status = try? fileSystem.status(of: name, in: folder.rawValue) else { return true }
                switch status.kind {
                case .directory:
                    guard depth < FileWrapper.maximumDepth else { return true }
                    pending.append((path + "/" + name, depth + 1))
                case .regular where status.linkCount > 1: return true
                default: continue
                }
            }
        }
        return false
    }

    /// Makes the package an exchange put at `entry/item` a version's own (format 4, step 4): each
    /// of its folders is made anew in `entry/fresh` (same names and modes), its files are moved
    /// there, except those with other hard links (members the save linked into its new package,
    /// or that have a name outside the store), which become a link to the same member of the
    /// newest version with the same bytes, or a private copy; then the emptied folders are
    /// removed and `fresh` becomes `item`. Afterwards no folder or file of the version is one the
    /// document had: a process whose working folder, or an open file, was in the package before
    /// the save no longer reaches it by name. Resumes where a killed process stopped
    /// (`fresh` there). Returns what each copy was made from (for ``SharingCache``), paths
    /// relative to the entry.
    @discardableResult
    func rebuildExchangedTree(in entry: URL, key: DocumentKey?) throws(DocumentKitError) -> [SourceIdentity: String] {
        func fail(_ error: Errno, _ path: String, _ step: String) -> DocumentKitError {
            DocumentKitError(error, operation: .save, path: path, step: step)
        }
        let entryFolder = try openFolder(entry, "opening the replaced package in the version store")
        let durable = durability.isDurable
        let known = key.map { sharing.lookup($0.folderName) } ?? [:]
        var copier = PrivateCopy(fileSystem: fileSystem, durable: durable, itemPath: entry.path + "/item", known: known)
        // The save's own link of an unchanged member into its new package changed the member's
        // change time: a stored copy of it is found by the rest of its identity, if its contents
        // were last modified over 2 s ago (git's "racily clean" rule), and remembered so for the next.
        var knownFiles: [SourceIdentity: String] = [:]
        for (identity, path) in known { knownFiles[identity.ignoringChangeTime] = path }
        var made: [SourceIdentity: String] = [:]
        let trustedBefore = Int64(Date().timeIntervalSince1970 * 1e9) - 2_000_000_000
        var newest: Descriptor?
        var lookedForNewest = key == nil

        /// Removes what a killed rebuild may have left of a copy at `name` in `new`.
        func removePartialCopy(_ name: String, in new: CInt, path: String) throws(DocumentKitError) {
            do { try fileSystem.unlink(name, in: new) } catch {
                if error != .noSuchFileOrDirectory { throw fail(error, path, "replacing a partial copy") }
            }
        }

        /// Moves what is in `old` (at `path`, `relative` to the entry) into `new`.
        func move(_ old: CInt, path: String, into new: CInt, newPath: String, relative: String, components: [String]) throws(DocumentKitError) {
            let names: [String]
            do { names = try fileSystem.contentsOfDirectory(old, name: path) } catch { throw fail(error, path, "listing the replaced package") }
            for name in names {
                let childPath = path + "/" + name
                let status: FileStatus
                do { status = try fileSystem.status(of: name, in: old) } catch { throw fail(error, childPath, "reading the replaced package") }
                switch status.kind {
                case .directory:
                    let (from, to): (CInt, CInt)
                    do throws(Errno) {
                        do { try fileSystem.makeDirectory(name, in: new, mode: 0o700) } catch { if error != .fileExists { throw error } }
                        from = try fileSystem.open(name, in: old, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                    } catch { throw fail(error, childPath, "making the replaced package's folder anew") }
                    defer { Glibc.close(from) }
                    do { to = try fileSystem.open(name, in: new, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                        throw fail(error, newPath + "/" + name, "making the replaced package's folder anew")
                    }
                    defer { Glibc.close(to) }
                    try move(from, path: childPath, into: to, newPath: newPath + "/" + name, relative: relative + "/" + name, components: components + [name])
                    do throws(Errno) {
                        try fileSystem.changeMode(to, to: status.permissions, name: newPath + "/" + name)
                        if durable { try fileSystem.synchronizeDirectory(to, name: newPath + "/" + name) }
                        try fileSystem.removeDirectory(name, in: old)
                    } catch { throw fail(error, childPath, "replacing the replaced package's folder") }
                case .regular where status.linkCount > 1:
                    // A member the document still has (or another name has): linked from the newest
                    // version where it has the same bytes, else copied.
                    let identity = SourceIdentity(status)
                    let settled = status.modificationTime < trustedBefore
                    if settled, let stored = knownFiles[identity.ignoringChangeTime] {
                        try removePartialCopy(name, in: new, path: newPath + "/" + name)
                        if (try? fileSystem.link(stored, in: AT_FDCWD, as: name, in: new)) != nil {
                            made[identity] = relative + "/" + name
                            do { try fileSystem.unlink(name, in: old) } catch { throw fail(error, childPath, "removing a member shared with the document") }
                            continue
                        }
                    }
                    if !lookedForNewest, let key {
                        newest = newestEntry(in: folder(for: key), key: key)
                        lookedForNewest = true
                    }
                    let same = newest.flatMap { sameMember(components + [name], in: $0.rawValue) }
                    defer { if let same { Glibc.close(same.directory) } }
                    try removePartialCopy(name, in: new, path: newPath + "/" + name)
                    try copier.copy(
                        name, in: old, sourcePath: childPath, as: name, in: new, destinationPath: relative + "/" + name,
                        previous: same.map { ($0.directory, $0.name) })
                    if settled { made[identity] = relative + "/" + name }
                    do { try fileSystem.unlink(name, in: old) } catch { throw fail(error, childPath, "removing a member shared with the document") }
                default:
                    // Its own file now (or a symbolic link): moved, not copied.
                    do { try fileSystem.rename(name, in: old, to: name, in: new) } catch {
                        throw fail(error, childPath, "moving the replaced package's member")
                    }
                }
            }
        }

        let item = entry.appendingPathComponent("item").path
        let fresh = entry.appendingPathComponent("fresh").path
        if let itemStatus = try? fileSystem.status(of: "item", in: entryFolder.rawValue) {
            let (old, new): (CInt, CInt)
            do throws(Errno) {
                do { try fileSystem.makeDirectory("fresh", in: entryFolder.rawValue, mode: 0o700) } catch { if error != .fileExists { throw error } }
                old = try fileSystem.open("item", in: entryFolder.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            } catch { throw fail(error, fresh, "making the replaced package's folder anew") }
            defer { Glibc.close(old) }
            do { new = try fileSystem.open("fresh", in: entryFolder.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                throw fail(error, fresh, "making the replaced package's folder anew")
            }
            defer { Glibc.close(new) }
            try move(old, path: item, into: new, newPath: fresh, relative: "item", components: [])
            do throws(Errno) {
                try fileSystem.changeMode(new, to: itemStatus.permissions, name: fresh)
                if durable { try fileSystem.synchronizeDirectory(new, name: fresh) }
                try fileSystem.removeDirectory("item", in: entryFolder.rawValue)
            } catch { throw fail(error, item, "replacing the replaced package's folder") }
        }
        do throws(Errno) {
            try fileSystem.rename("fresh", in: entryFolder.rawValue, to: "item", in: entryFolder.rawValue)
            if durable { try fileSystem.synchronizeDirectory(entryFolder.rawValue, name: entry.path) }
        } catch { throw fail(error, item, "putting the replaced package's new folder in place") }
        return withExtendedLifetime(newest) { copier.made.merging(made) { _, mine in mine } }
    }

    /// The folder (open, for the caller to close) and name of the member at `components` of the
    /// version entry `entry`'s item; nil when it has none there.
    private func sameMember(_ components: [String], in entry: CInt) -> (directory: CInt, name: String)? {
        guard let name = components.last, var folder = try? fileSystem.open("item", in: entry, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        else { return nil }
        for component in components.dropLast() {
            let next = try? fileSystem.open(component, in: folder, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            Glibc.close(folder)
            guard let next else { return nil }
            folder = next
        }
        return (folder, name)
    }
}
