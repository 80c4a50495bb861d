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
/// package in place and the replaced one in the entry; then the replaced package's folders are
/// made anew in the store (its files moved into them, those it shares with the new package made
/// private), so that no folder or file of the version is one the document had open. No copy of
/// the changed members, and the replaced package is never anywhere but in the library or the store.
extension VersionStore {
    /// The prefix of an entry whose `item` is exchanged with the document it replaces.
    static let exchangePrefix = ".swap-"

    /// Stores where an exchange across folders was refused by the file system (another mount, no
    /// `RENAME_EXCHANGE`): their saves copy the replaced package from then on, in this process.
    private static let exchangeRefused = Mutex<Set<String>>([])

    /// Whether a save may keep the replaced package by exchange: a package with a manifest
    /// replaced by a package, a version named by its contents, not a conflict, in a store whose
    /// file system has not refused the exchange. Returns the digest of the new package's
    /// manifest then (what tells a new package never exchanged from the replaced one).
    func exchangeDigest(_ tree: FileWrapper, replacing status: FileStatus, record: VersionRecord, isContentNamed: Bool) -> String? {
        guard tree.isDirectory, status.kind == .directory, isContentNamed, !record.conflict,
            !Self.exchangeRefused.withLock({ $0.contains(url.path) }),
            let manifest = try? tree[manifestName]?.regularFileContents
        else { return nil }
        // The same contents again: the new package could not be told from the replaced one.
        let digest = String(Digest.sha256(manifest).prefix(16))
        return record.id.hasSuffix("-" + digest) ? nil : digest
    }

    /// Saves `tree` over the package at `itemURL` and puts the package it replaces in a new
    /// `.swap-` entry whose record is `record` (see above); call it under the document folder's
    /// shared hold, then ``completeExchange(_:record:key:in:itemURL:)`` under the same hold.
    /// Returns nil, with nothing changed, where the exchange can't be used (the caller copies).
    func saveKeepingByExchange(
        _ tree: FileWrapper, newDigest: String, to itemURL: URL, options: SaveOptions, record: VersionRecord, key: DocumentKey,
        in documentFolder: URL
    ) throws(DocumentKitError) -> (saved: FileWrapper, entry: URL, folderFlushed: Bool)? {
        let entry: URL
        let pendingRecord: PendingRecord
        do {
            entry = try createExchangeEntry(in: documentFolder, newDigest: newDigest)
            pendingRecord = try beginRecord(record, inNewEntry: entry)
        } catch {
            throw Self.versionNotKept(error, itemURL: itemURL)
        }
        var exchanging = options
        exchanging.replacedPackageExchange = entry.appendingPathComponent("item", isDirectory: true)
        // Flushing each: the record and the document's folder (the entry's name) are flushed
        // with the new package's last files, all at once, before the exchange.
        let together = options.durability.flushesEachItem && pendingRecord.flushes
        let folder = together ? try? openFolder(documentFolder, "flushing") : nil
        if together, let recordItem = pendingRecord.flushItem {
            exchanging.flushedWithPackage = [recordItem]
            if let folder { exchanging.flushedWithPackage.append(FileSystem.FlushItem(fd: folder.rawValue, name: documentFolder.path, isDirectory: true)) }
        }
        let flushedRecord = !exchanging.flushedWithPackage.isEmpty
        // Its writeback overlaps the new package's; named just before the exchange, the name
        // flushed with the entry's folder after it.
        exchanging.beforeExchange = { () throws(DocumentKitError) in
            do throws(DocumentKitError) { try pendingRecord.finish(flushed: flushedRecord) } catch {
                throw Self.versionNotKept(error, itemURL: itemURL)
            }
        }
        let saved: FileWrapper
        defer { withExtendedLifetime(folder) {} }
        do { saved = try tree.write(to: itemURL, options: exchanging) } catch {
            if error.originalIsIntact == true, error.step == SaveOptions.crossFolderExchangeStep {
                _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem)
                if [.crossDevice, .unsupportedByFileSystem].contains(error.code) || error.errno == .invalidArgument {
                    Self.exchangeRefused.withLock { _ = $0.insert(url.path) }
                    Self.logger.notice("Version store \(url.path): its file system can't exchange packages across folders (\(error.localizedDescription)); replaced packages are copied")
                }
                return nil  // This save copies (no permission to move the package folder, say).
            }
            // A swap that could not be undone left the replaced package in the entry.
            settleExchangeEntry(entry.lastPathComponent, in: documentFolder, key: key)
            throw error
        }
        return (saved, entry, folder != nil && flushedRecord)
    }

    /// Keeps the package an exchange put in `entry` as the version `record`: its folders made
    /// anew, the entry renamed to the id. Returns the version, or nil when it could not be
    /// named yet (the next process to clean the folder completes it; a warning says why).
    func completeExchange(_ entry: URL, record: VersionRecord, key: DocumentKey, in documentFolder: URL, itemURL: URL) -> FileVersion? {
        do {
            let made = try rebuildExchangedTree(in: entry, key: key)
            let final = documentFolder.appendingPathComponent(record.id, isDirectory: true)
            do { try fileSystem.rename(entry.path, in: AT_FDCWD, to: final.path, in: AT_FDCWD) } catch {
                guard let existing = existingVersion(record.id, in: documentFolder, itemURL: itemURL) else {
                    throw DocumentKitError(error, operation: .save, path: final.path, step: "putting the replaced version in place")
                }
                _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem)
                return existing
            }
            do { try synchronize(documentFolder, "flushing the folder that names the replaced version") } catch {
                Self.logger.warning(
                    "Saved \(itemURL.path); the version it replaced, \(final.path), may not survive a power loss: \(error.localizedDescription)")
            }
            if !made.isEmpty {
                let prefix = final.path + "/"
                sharing.replace(key.folderName, with: made.mapValues { prefix + $0 })
            }
            sharing.rememberPlaced(final.path, of: key.folderName)
            return Self.version(from: record, itemURL: itemURL, contents: final.appendingPathComponent("item", isDirectory: true))
        } catch {
            try? synchronize(documentFolder)
            Self.logger.warning(
                "Saved \(itemURL.path); the version it replaced is in the version store at \(entry.path) but could not be completed yet (\(error.localizedDescription)): the next save or listing of the document completes it")
            return nil
        }
    }

    /// A new `.swap-RANDOM-DEVICE-INODE-DIGEST` entry with an empty `item` folder, whose device
    /// and inode (hexadecimal) its name records, and the first 16 digits of the new package's
    /// manifest digest: while `item` is that folder, or has that manifest, the exchange has not
    /// happened (``settleExchangeEntry(_:in:key:)``).
    private func createExchangeEntry(in documentFolder: URL, newDigest: String) throws(DocumentKitError) -> URL {
        let born = try createEntry(in: documentFolder, purpose: "swap")
        func fail(_ error: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(error, operation: .save, path: born.path, step: step, originalIsIntact: true)
        }
        do throws(Errno) {
            try fileSystem.makeDirectory(born.path + "/item", in: AT_FDCWD, mode: 0o700)
            let status = try fileSystem.status(of: born.path + "/item", in: AT_FDCWD)
            let marker = "-" + String(status.device, radix: 16) + "-" + String(status.inode, radix: 16) + "-" + newDigest
            let named = URL(fileURLWithPath: born.path + marker, isDirectory: true)
            try fileSystem.rename(born.path, in: AT_FDCWD, to: named.path, in: AT_FDCWD)
            return named
        } catch {
            _ = try? removeItem(born.path, in: AT_FDCWD, using: fileSystem)
            throw fail(error, "creating a version to exchange with the document")
        }
    }

    /// What an exchange entry's name records: its empty folder's device and inode, and the new
    /// package's manifest digest (nil: nothing, the entry was still being made).
    static func exchangeMarker(of name: String) -> (device: UInt64, inode: UInt64, newDigest: String)? {
        let parts = name.dropFirst(exchangePrefix.count).split(separator: "-")
        guard parts.count == 4, let device = UInt64(parts[1], radix: 16), let inode = UInt64(parts[2], radix: 16), parts[3].count == 16
        else { return nil }
        return (device, inode, String(parts[3]))
    }

    /// Completes, removes or leaves the `.swap-` entry `name` of `folder`, whose writer is gone
    /// (under the folder's exclusive lock), or whose save failed (`Formats/version-store/v4`,
    /// "Settling a `.swap-` entry"). It holds the package the save replaced when it is being
    /// made anew (`fresh`), or when `item` has the contents the record's id names; a new package
    /// never exchanged when `item` is missing, has the new manifest the name records, or (by this
    /// file system's numbers, so only on the computer that made it) is the folder the name
    /// records. Then it is completed (``rebuildExchangedTree(in:key:)``, the rename to the id;
    /// contents the id no longer names get a new id of the same date), or removed. Anything that
    /// can't be read or done leaves the entry for the next cleaning: it may hold the only copy of
    /// a state a save replaced.
    func settleExchangeEntry(_ name: String, in folder: URL, key: DocumentKey?) {
        let entry = folder.appendingPathComponent(name, isDirectory: true)
        func remove() { _ = try? removeItem(entry.path, in: AT_FDCWD, using: fileSystem) }
        guard let marker = Self.exchangeMarker(of: name) else { return remove() }  // died making it
        let recordPath = entry.path + "/" + VersionRecord.fileName
        do { _ = try fileSystem.status(of: recordPath, in: AT_FDCWD) } catch {
            if error == .noSuchFileOrDirectory { remove() }  // died writing it, before anything else
            return
        }
        guard var record = try? readRecord(in: entry, remembering: false), VersionIdentifier.isValid(record.id) else {
            Self.logger.warning("Version store \(folder.path): \(name) may hold a package a save replaced, but its record can't be read: left as it is")
            return
        }
        let item = entry.appendingPathComponent("item", isDirectory: true)
        if (try? fileSystem.status(of: entry.path + "/fresh", in: AT_FDCWD)) == nil {
            let status: FileStatus
            do { status = try fileSystem.status(of: item.path, in: AT_FDCWD) } catch {
                if error == .noSuchFileOrDirectory { remove() }
                return
            }
            let manifest = item.appendingPathComponent(manifestName).path
            let digest = contentsOfFile(atPath: manifest).map { String(Digest.sha256($0).prefix(16)) }
            if digest.map({ record.id.hasSuffix("-" + $0) }) != true {
                if digest == marker.newDigest { return remove() }
                let isOwn = record.host.map { $0 == savingComputerName } ?? true
                if status.device == marker.device && status.inode == marker.inode {
                    if isOwn { remove() }
                    return
                }
                // Replaced, then changed; or copied here from elsewhere: its own computer decides.
                guard isOwn else { return }
            }
        }
        do {
            _ = try rebuildExchangedTree(in: entry, key: key)
            if let digest = contentDigest(of: item, isPackage: true), record.id.hasSuffix("-" + digest.prefix(16)) {
                // As named.
            } else {
                record.id = String(record.id.prefix(VersionIdentifier.length - 16)) + String(VersionIdentifier.make(date: Date(), digest: nil).suffix(16))
                try writeRecord(record, inNewEntry: entry)
            }
        } catch {
            Self.logger.warning("Version store \(folder.path): version \(record.id), kept by a save that was interrupted, can't be completed yet: \(error.localizedDescription)")
            return
        }
        if completeEntry(entry, id: record.id, in: folder) {
            do { try synchronize(folder, "flushing the folder that names a completed version") } catch {
                Self.logger.warning("Version store \(folder.path): completed version \(record.id) may not survive a power loss: \(error.localizedDescription)")
            }
            Self.logger.notice("Version store \(folder.path): completed version \(record.id), kept by a save that was interrupted")
        }
    }

    /// Completes or removes the `.swap-` entries of `folder` (``settleExchangeEntry(_:in:key:)``)
    /// if no process holds the folder's lock (a listing that meets what a save left when it
    /// died, or could not complete); returns whether it could. A process that can't open the lock
    /// file for writing (a reader without write access) leaves them.
    func settleExchangeEntriesIfIdle(in folder: URL, key: DocumentKey) -> Bool {
        let lockPath = lockPath(for: key)
        guard let fd = try? fileSystem.open(lockPath, in: AT_FDCWD, flags: O_RDWR | O_NOFOLLOW) else { return false }
        let lock = Descriptor(owning: fd)
        guard (try? fileSystem.lockExclusivelyWithoutWaiting(lock.rawValue, name: lockPath)) != nil else { return false }
        return withExtendedLifetime(lock) { removeAbandonedEntries(in: folder, key: key) != nil }
    }
}
