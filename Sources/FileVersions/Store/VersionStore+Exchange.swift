#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Logging
import Synchronization
import SystemPackage

/// Keeping the package a save replaces by exchanging it into the store (format 4,
/// `Formats/version-store/v4`): the new package is built in a `.swap-` entry whose record names
/// the version of the package it replaces, and one `renameat2(RENAME_EXCHANGE)` puts the new
/// package in place and the replaced one in the entry: no copy, and the replaced package is never
/// anywhere but in the library or in the store.
extension VersionStore {
    /// The prefix of an entry whose `item` is exchanged with the document it replaces.
    static let exchangePrefix = ".swap-"

    /// Stores where an exchange across folders was refused (another mount, no
    /// `RENAME_EXCHANGE`): their saves copy the replaced package from then on.
    private static let exchangeRefused = Mutex<Set<String>>([])

    /// Whether a save may keep the replaced package by exchange: a package replaced by a package,
    /// a version named by its contents (a recovery tells the replaced package from the new one by
    /// them), not a conflict, in a store that has not refused the exchange.
    func mayExchange(_ tree: FileWrapper, replacing status: FileStatus, record: VersionRecord, isContentNamed: Bool) -> Bool {
        tree.isDirectory && status.kind == .directory && isContentNamed && !record.conflict
            && !Self.exchangeRefused.withLock { $0.contains(url.path) }
    }

    /// Saves `tree` over the package at `itemURL` and keeps the package it replaces as the
    /// version `record` by exchange (see above); call it under the document folder's shared hold.
    /// Returns nil, with nothing changed, where the exchange is impossible (the caller copies).
    /// `kept` is nil when the replaced package is in the store but could not be named yet (it is
    /// completed by the next process to clean the folder; a warning says why).
    func saveKeepingByExchange(
        _ tree: FileWrapper, to itemURL: URL, options: SaveOptions, record: VersionRecord, key: DocumentKey, in documentFolder: URL
    ) throws(DocumentKitError) -> (saved: FileWrapper, kept: FileVersion?)? {
        let entry: URL
        do {
            entry = try createEntry(in: documentFolder, purpose: "swap")
            // Flushed with the entry's folder after the exchange.
            try writeRecord(record, inNewEntry: entry, flushedLater: true)
        } catch {
            throw Self.versionNotKept(error, itemURL: itemURL)
        }
        let item = entry.appendingPathComponent("item", isDirectory: true)
        var exchanging = options
        exchanging.replacedItemDestination = item
        let saved: FileWrapper
        do { saved = try tree.write(to: itemURL, options: exchanging) } catch {
            if error.originalIsIntact == true, error.step == SaveOptions.crossFolderExchangeStep,
                [.crossDevice, .unsupportedByFileSystem, .invalidArgument].contains(error.code)
            {
                _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem)
                Self.exchangeRefused.withLock { _ = $0.insert(url.path) }
                Self.logger.notice("Version store \(url.path): the library can't exchange packages with it (\(error.localizedDescription)); replaced packages are copied")
                return nil
            }
            // A swap that could not be undone left the replaced package in the entry.
            settleExchangeEntry(entry.lastPathComponent, in: documentFolder)
            throw error
        }
        do {
            let made = try makeExchangedTreePrivate(item, key: key)
            let final = documentFolder.appendingPathComponent(record.id, isDirectory: true)
            do { try fileSystem.rename(entry.path, in: AT_FDCWD, to: final.path, in: AT_FDCWD) } catch {
                guard let existing = existingVersion(record.id, in: documentFolder, itemURL: itemURL) else {
                    throw DocumentKitError(error, operation: .save, path: final.path, step: "putting the replaced version in place")
                }
                _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem)
                return (saved, existing)
            }
            synchronize(documentFolder)
            let prefix = final.path + "/"
            sharing.replace(key.folderName, with: made.mapValues { prefix + $0 })
            sharing.rememberPlaced(final.path, of: key.folderName)
            return (saved, Self.version(from: record, itemURL: itemURL, contents: final.appendingPathComponent("item", isDirectory: true)))
        } catch {
            Self.logger.warning(
                "Saved \(itemURL.path); the version it replaced is in the version store at \(entry.path) but could not be named yet (\(error.localizedDescription)): the next save or listing of the document completes it")
            return (saved, nil)
        }
    }

    /// Completes or removes the `.swap-` entry `name` of `folder`, whose writer is gone (under the
    /// folder's exclusive lock), or whose save failed: its `item` is the package it replaced when
    /// its contents are the ones its record's id names (then its files shared with the document
    /// are made private and the entry is renamed to the id); otherwise it is the new package that
    /// was never exchanged (or nothing), and the entry is removed.
    func settleExchangeEntry(_ name: String, in folder: URL) {
        let entry = folder.appendingPathComponent(name, isDirectory: true)
        let item = entry.appendingPathComponent("item", isDirectory: true)
        guard let record = try? readRecord(in: entry, remembering: false), VersionIdentifier.isValid(record.id),
            let digest = contentDigest(of: item, isPackage: true), record.id.hasSuffix("-" + digest.prefix(16))
        else {
            _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem)
            return
        }
        // Left as it is if this fails (no space for a copy): the next cleaning tries again.
        do { _ = try makeExchangedTreePrivate(item, key: nil) } catch {
            Self.logger.warning("Version store \(folder.path): version \(record.id), kept by a save that was interrupted, can't be completed yet: \(error.localizedDescription)")
            return
        }
        if completeEntry(entry, id: record.id, in: folder) {
            synchronize(folder)
            Self.logger.notice("Version store \(folder.path): completed version \(record.id), kept by a save that was interrupted")
        }
    }

    /// Completes or removes the `.swap-` entries of `folder` (``settleExchangeEntry(_:in:)``) if no
    /// process holds the folder's lock (a listing that meets what a save left when it died, or
    /// could not name its version); returns whether it could. A process that can't open the lock
    /// file (a reader without write access) leaves them.
    func settleExchangeEntriesIfIdle(in folder: URL, key: DocumentKey) -> Bool {
        let lockPath = url.appendingPathComponent("locks", isDirectory: true).path + "/" + key.folderName
        guard let fd = try? fileSystem.open(lockPath, in: AT_FDCWD, flags: O_RDWR | O_NOFOLLOW) else { return false }
        let lock = Descriptor(owning: fd)
        guard (try? fileSystem.lockExclusivelyWithoutWaiting(lock.rawValue, name: lockPath)) != nil else { return false }
        return withExtendedLifetime(lock) { removeAbandonedEntries(in: folder) != nil }
    }

    /// Replaces every regular file of the exchanged package `item` that has other hard links (the
    /// save linked the document's unchanged members into its new package: format 4 keeps no file
    /// of a version shared with a document) by a link to the same member of the newest version
    /// with the same bytes, or a private copy. Returns what each was copied from (for
    /// ``SharingCache``), paths relative to the entry. Idempotent.
    func makeExchangedTreePrivate(_ item: URL, key: DocumentKey?) throws(DocumentKitError) -> [SourceIdentity: String] {
        let root = try openFolder(item, "opening the replaced package in the version store")
        var copier = PrivateCopy(
            fileSystem: fileSystem, durable: durability.isDurable, itemPath: item.path, known: key.map { sharing.lookup($0.folderName) } ?? [:])
        var newest: Descriptor?
        var lookedForNewest = key == nil
        func walk(_ directory: CInt, path: String, relative: String, previous: [String]) throws(DocumentKitError) {
            let names: [String]
            do { names = try fileSystem.contentsOfDirectory(directory, name: path) } catch {
                throw DocumentKitError(error, operation: .save, path: path, step: "listing the replaced package in the version store")
            }
            var replaced = false
            for name in names {
                let status: FileStatus
                do { status = try fileSystem.status(of: name, in: directory) } catch {
                    throw DocumentKitError(error, operation: .save, path: path + "/" + name, step: "reading the replaced package in the version store")
                }
                if status.kind == .directory {
                    let child: CInt
                    do { child = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                        throw DocumentKitError(error, operation: .save, path: path + "/" + name, step: "opening the replaced package in the version store")
                    }
                    defer { Glibc.close(child) }
                    try walk(child, path: path + "/" + name, relative: relative + "/" + name, previous: previous + [name])
                    continue
                }
                guard status.kind == .regular, status.linkCount > 1 else { continue }
                if !lookedForNewest, let key {
                    newest = newestEntry(in: folder(for: key), key: key)
                    lookedForNewest = true
                }
                let same = newest.flatMap { entry in sameMember(previous + [name], in: entry.rawValue) }
                defer { if let same { Glibc.close(same.directory) } }
                let temporary = TemporaryName.make(for: name, purpose: "private")
                try copier.copy(
                    name, in: directory, sourcePath: path + "/" + name, as: temporary, in: directory,
                    destinationPath: relative + "/" + name, previous: same.map { ($0.directory, $0.name) })
                do { try fileSystem.rename(temporary, in: directory, to: name, in: directory) } catch {
                    _ = try? fileSystem.unlink(temporary, in: directory)
                    throw DocumentKitError(error, operation: .save, path: path + "/" + name, step: "replacing a member shared with the document by a private copy")
                }
                replaced = true
            }
            if replaced, durability.isDurable {
                do { try fileSystem.synchronizeDirectory(directory, name: path) } catch {
                    throw DocumentKitError(error, operation: .save, path: path, step: "flushing the replaced package in the version store")
                }
            }
        }
        try walk(root.rawValue, path: item.path, relative: "item", previous: [])
        return withExtendedLifetime(newest) { copier.made }
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

    /// A failure to keep the replaced version, as the save reports it: nothing was saved.
    static func versionNotKept(_ error: DocumentKitError, itemURL: URL) -> DocumentKitError {
        var error = error
        error.operation = .save
        error.originalIsIntact = true
        if error.path != itemURL.path, error.detail?.contains(itemURL.path) != true {
            let reason = error.detail.map { " " + $0 } ?? ""
            error.detail = "The version it replaces could not be kept in the version store, so it was not saved (\(error.path)).\(reason)"
            error.path = itemURL.path
        }
        return error
    }
}
