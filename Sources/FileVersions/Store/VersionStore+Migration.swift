#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Logging
import SystemPackage

extension VersionStore {
    /// Makes a version 1 store one of this code's format (`Formats/version-store/v4/SPEC.md`):
    /// every file of a version that has other hard links (in v1 they may be the live
    /// document's members) is replaced by a private copy; files that were one inode stay one
    /// inode among the versions of a document. Then `store.json` says so. Idempotent: a
    /// migration that dies is redone.
    func migrateFromVersion1() throws(DocumentKitError) {
        try makeEveryVersionPrivate()
        let folder = try openFolder(url, "opening the version store")
        try replaceStoreDescription(in: folder, step: "migrating the version store from format 1")
        Self.logger.notice("Version store \(url.path) migrated to format \(Self.formatVersion): its versions share no file with the documents")
    }

    /// Makes a version 2 or 3 store a version 4 one (`Formats/version-store/v4/SPEC.md`): its
    /// entries are version 4 entries as they are. From version 2, no entry changes once named from
    /// now on (a new state is a state entry, never a record rewritten); from version 3, a save may
    /// leave a `.swap-` entry that only code of version 4 completes. `store.json` saying 4 tells
    /// every reader, and keeps out code of versions 2 and 3 (they refuse a newer store).
    func migrateFromVersion(_ version: Int) throws(DocumentKitError) {
        let folder = try openFolder(url, "opening the version store")
        try replaceStoreDescription(in: folder, step: "migrating the version store from format \(version) to format \(Self.formatVersion)")
        Self.logger.notice("Version store \(url.path) migrated from format \(version) to format \(Self.formatVersion)")
    }

    /// Replaces `store.json` in the store's open folder by this code's description (hidden name, rename).
    func replaceStoreDescription(in folder: Descriptor, step: String) throws(DocumentKitError) {
        let temporary = try writeTemporaryFile(Self.storeDescription, named: "store.json", in: folder, path: url.path)
        do { try fileSystem.rename(temporary, in: folder.rawValue, to: "store.json", in: folder.rawValue) } catch {
            _ = try? fileSystem.unlink(temporary, in: folder.rawValue)
            throw DocumentKitError(error, operation: .save, path: url.path + "/store.json", step: step)
        }
        if durability.isDurable { try? fileSystem.synchronizeDirectory(folder.rawValue, name: url.path) }
    }

    /// Replaces every file of every version that has other hard links by a private copy (see
    /// ``migrateFromVersion1()``); returns how many documents the store has.
    @discardableResult
    func makeEveryVersionPrivate() throws(DocumentKitError) -> Int {
        guard exists(documentsURL) else { return 0 }
        let documents = try openFolder(documentsURL, "opening the version store to migrate it")
        let keys: [String]
        do { keys = try fileSystem.contentsOfDirectory(documents.rawValue, name: documentsURL.path) } catch {
            throw DocumentKitError(error, operation: .save, path: documentsURL.path, step: "listing the version store to migrate it")
        }
        for key in keys.sorted() where !key.hasPrefix(".") {
            let folderURL = documentsURL.appendingPathComponent(key)
            guard let folder = try? openFolder(folderURL, "opening a document's versions") else { continue }
            var copies: [FileIdentityKey: String] = [:]
            let entries = (try? fileSystem.contentsOfDirectory(folder.rawValue, name: folderURL.path)) ?? []
            for entry in entries.sorted() where !entry.hasPrefix(".removing-") && !entry.hasPrefix(Self.exchangePrefix) {
                let entryURL = folderURL.appendingPathComponent(entry)
                guard let entryFolder = try? openFolder(entryURL, "opening a version") else { continue }
                try makePrivate("item", in: entryFolder.rawValue, path: entryURL.path + "/item", copies: &copies)
            }
        }
        return keys.filter { !$0.hasPrefix(".") }.count
    }

    struct FileIdentityKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// Replaces every file under `name` in `directory` that has other links by a private copy
    /// (or a link to the copy already made of the same inode).
    private func makePrivate(_ name: String, in directory: CInt, path: String, copies: inout [FileIdentityKey: String])
        throws(DocumentKitError)
    {
        func fail(_ error: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(error, operation: .save, path: path, step: step)
        }
        let status: FileStatus
        do { status = try fileSystem.status(of: name, in: directory) } catch {
            if error == .noSuchFileOrDirectory { return }
            throw fail(error, "migrating the version store: reading")
        }
        switch status.kind {
        case .directory:
            let fd: CInt
            let names: [String]
            do {
                fd = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            } catch { throw fail(error, "migrating the version store: opening") }
            defer { Glibc.close(fd) }
            do { names = try fileSystem.contentsOfDirectory(fd, name: path) } catch {
                throw fail(error, "migrating the version store: listing")
            }
            for child in names.sorted() { try makePrivate(child, in: fd, path: path + "/" + child, copies: &copies) }
            if durability.isDurable { try? fileSystem.synchronizeDirectory(fd, name: path) }
        case .regular where status.linkCount > 1:
            let key = FileIdentityKey(device: status.device, inode: status.inode)
            let temporary = TemporaryName.make(for: name, purpose: "private")
            if let copy = copies[key] {
                do { try fileSystem.link(copy, in: AT_FDCWD, as: temporary, in: directory) } catch {
                    throw fail(error, "migrating the version store: linking")
                }
            } else {
                let known: [SourceIdentity: String] = [:]
                var copier = PrivateCopy(fileSystem: fileSystem, durable: durability.isDurable, itemPath: path, known: known)
                try copier.copy(name, in: directory, sourcePath: path, as: temporary, in: directory, destinationPath: path, previous: nil)
            }
            do { try fileSystem.rename(temporary, in: directory, to: name, in: directory) } catch {
                _ = try? fileSystem.unlink(temporary, in: directory)
                throw fail(error, "migrating the version store: replacing a shared file by a private copy")
            }
            if copies[key] == nil { copies[key] = path }
        default:
            return
        }
    }
}
