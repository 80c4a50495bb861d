#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Logging

/// The last steps of every save: put a complete temporary item in place of the item, in one
/// atomic step, and make that durable.
///
/// With `renameat2(RENAME_EXCHANGE)` the two names swap, so the old item is still at the
/// temporary name until the parent's flush succeeded: a failed flush swaps back and the
/// original is untouched. Where the file system refuses the exchange (NFS, some FUSE), a file is
/// renamed over the item (atomic for files), and a directory goes through the journaled
/// two-rename swap (``swapDirectoryWithIntent``).
struct AtomicReplacement {
    let fileSystem: FileSystem
    let parent: CInt
    let parentPath: String
    let name: String
    let documentPath: String
    let durable: Bool
    /// The item the swap must replace (``SaveOptions/itemToReplace``); nil: whatever is there.
    var itemToReplace: FileIdentity? = nil
    /// The folder that holds the temporary item when it is not `parent` (a package exchanged
    /// with the one it replaces across folders, ``SaveOptions/replacedItemDestination``), and its
    /// path. Such a swap has no fallback: where the exchange is impossible it fails, original intact.
    var temporaryFolder: (descriptor: CInt, path: String)? = nil
    /// The folder that holds the temporary item.
    private var temporaryParent: CInt { temporaryFolder?.descriptor ?? parent }
    static let logger = Logger(label: "DocumentKit.save")

    /// What the swap left at the temporary name.
    enum Outcome {
        /// The old item, to be removed.
        case oldItemAtTemporaryName
        /// Nothing: the name was free, or the old file was replaced by rename.
        case nothing
    }

    func fail(_ errno: Errno, _ step: String, intact: Bool = true) -> DocumentKitError {
        DocumentKitError(errno, operation: .save, path: documentPath, step: step, originalIsIntact: intact)
    }

    /// Swaps `temporaryName` in. `isDirectory` (the new or the old item is a directory) selects
    /// the fallback when exchange is unsupported.
    func swap(_ temporaryName: String, itemExists: Bool, isDirectory: Bool) throws(DocumentKitError) -> Outcome {
        var exists = itemExists
        if !exists {
            do {
                try fileSystem.renameWithoutReplacing(temporaryName, in: temporaryParent, to: name, in: parent)
                try flushParent(undo: { () throws(Errno) in
                    try fileSystem.rename(name, in: parent, to: temporaryName, in: temporaryParent)
                })
                return .nothing
            } catch let error as Errno where error == .fileExists {
                exists = true  // Created meanwhile by someone else: replace it like any other.
            } catch let error as Errno where Self.isUnsupported(error) && temporaryFolder == nil {
                // No RENAME_NOREPLACE here (NFS): link-free check, then plain rename.
                if (try? fileSystem.status(of: name, in: parent)) != nil {
                    exists = true
                } else {
                    do { try fileSystem.rename(temporaryName, in: parent, to: name, in: parent) } catch {
                        throw fail(error, "renaming the new item into place")
                    }
                    try flushParent(undo: nil)
                    return .nothing
                }
            } catch let error as Errno {
                throw fail(error, "renaming the new item into place")
            } catch let error as DocumentKitError {
                throw error
            } catch {
                throw fail(.ioError, "renaming the new item into place")
            }
        }
        precondition(exists)
        try checkItemInPlace()
        do {
            try fileSystem.exchange(temporaryName, in: temporaryParent, with: name, in: parent)
        } catch {
            if temporaryFolder != nil {
                // Refused (another mount, no exchange, no permission to move the package folder):
                // the caller may keep the replaced package otherwise. Any other error is the save's.
                let refused: [Errno] = [.improperLink, .permissionDenied, .notPermitted]
                guard Self.isUnsupported(error) || refused.contains(error) else {
                    throw fail(error, "swapping the new package in (renameat2 RENAME_EXCHANGE)")
                }
                throw fail(error, SaveOptions.crossFolderExchangeStep)
            }
            guard Self.isUnsupported(error) else { throw fail(error, "swapping the new item in (renameat2 RENAME_EXCHANGE)") }
            if isDirectory {
                try swapDirectoryWithIntent(temporaryName)
                return .oldItemAtTemporaryName
            }
            try renameFileOver(temporaryName)
            return .nothing
        }
        // A replaced tree stays locked by the save (PackageSave), so other processes' recovery
        // leaves it at the temporary name; a replaced file may be swept as litter at once.
        if isDirectory { try checkReplacedItem(temporaryName) }
        try flushParent(undo: { () throws(Errno) in
            try fileSystem.exchange(temporaryName, in: temporaryParent, with: name, in: parent)
        })
        return .oldItemAtTemporaryName
    }

    /// Just before the exchange: the item at the name is the one to replace.
    private func checkItemInPlace() throws(DocumentKitError) {
        guard let itemToReplace else { return }
        do { try SaveOptions.check(try fileSystem.status(of: name, in: parent), isItem: itemToReplace, path: documentPath) } catch let error as Errno {
            throw error == .noSuchFileOrDirectory ? SaveOptions.itemGone(documentPath) : fail(error, "reading the status of the item to replace")
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw fail(.ioError, "reading the status of the item to replace")
        }
    }

    /// Just after the exchange: unless the item it put at `temporaryName` is the one to replace
    /// (another was put in its place meanwhile), swaps back and throws.
    private func checkReplacedItem(_ temporaryName: String) throws(DocumentKitError) {
        guard let itemToReplace else { return }
        let failure: DocumentKitError
        do {
            let replaced = try fileSystem.status(of: temporaryName, in: temporaryParent)
            if SaveOptions.isItem(replaced, itemToReplace) { return }
            failure = SaveOptions.itemReplaced(documentPath)
        } catch {
            failure = fail(error, "reading the status of the replaced item")
        }
        do { try fileSystem.exchange(temporaryName, in: temporaryParent, with: name, in: parent) } catch {
            // The new item stays in place; the other one is at the temporary name, which recovery leaves alone.
            throw DocumentKitError(
                error, operation: .save, path: documentPath,
                step: "swapping back after the replaced item could not be confirmed (\(failure.detail ?? failure.step ?? ""))",
                originalIsIntact: false)
        }
        throw failure
    }

    /// The fallback for a file: rename it over the old one (atomic). For a durable save the old
    /// file is first kept under a second name (a hard link), so that a failed flush can put it back.
    private func renameFileOver(_ temporaryName: String) throws(DocumentKitError) {
        let backup = TemporaryName.make(for: name, purpose: "old")
        var hasBackup = false
        if durable {
            do {
                try fileSystem.link(name, in: parent, as: backup, in: parent)
                hasBackup = true
            } catch {
                // Where hard links are impossible, the save goes on without an undo.
                guard error == .notPermitted || error == .notSupported || error == .tooManyLinks else {
                    throw fail(error, "keeping the old file under a temporary name")
                }
            }
        }
        defer { if hasBackup { _ = try? fileSystem.unlink(backup, in: parent) } }
        do { try fileSystem.rename(temporaryName, in: parent, to: name, in: parent) } catch {
            throw fail(error, "renaming the new file over the old one")
        }
        let undo: () throws(Errno) -> Void = { () throws(Errno) in
            try fileSystem.rename(backup, in: parent, to: name, in: parent)
        }
        try flushParent(undo: hasBackup ? undo : nil)
    }

    /// Flushes the parent directory if the save is durable. On failure, runs `undo` (which puts
    /// the original back) and throws; without an undo the new item stays and the error says so.
    private func flushParent(undo: (() throws(Errno) -> Void)?) throws(DocumentKitError) {
        guard durable else { return }
        do throws(Errno) {
            // Across folders, the other folder's entry changed too: both flushed at once.
            var folders = [FileSystem.FlushItem(fd: parent, name: parentPath, isDirectory: true)]
            if let temporaryFolder { folders.append(FileSystem.FlushItem(fd: temporaryFolder.descriptor, name: temporaryFolder.path, isDirectory: true)) }
            if let error = fileSystem.synchronize(together: folders).lazy.compactMap({ $0 }).first { throw error }
        } catch {
            guard let undo else {
                throw DocumentKitError(
                    error, operation: .save, path: documentPath,
                    step: "flushing the folder after the rename (fsync); the new version is in place but may not survive a power failure",
                    originalIsIntact: false)
            }
            do { try undo() } catch let undoError {
                throw DocumentKitError(
                    error, operation: .save, path: documentPath,
                    step: "flushing the folder after the swap (fsync), and swapping back failed too (\(undoError.readableDescription)); the new version is in place",
                    originalIsIntact: false)
            }
            throw fail(error, "flushing the folder after the swap (fsync); the swap was undone")
        }
    }

    /// The fallback swap for directories: record the intent, rename the old tree aside, rename
    /// the new one in, flush, forget the intent. A crash at any point is completed by
    /// ``InterruptedSaveRecovery`` at the next open or save, so the name is never left missing.
    private func swapDirectoryWithIntent(_ temporaryName: String) throws(DocumentKitError) {
        let oldName = TemporaryName.make(for: name, purpose: "old")
        let intentName = TemporaryName.prefix(for: name) + "intent"
        let record = RenameIntent(newName: temporaryName, oldName: oldName)
        // 1. The intent, written completely (and flushed) before anything is renamed; locked
        // from its first instant (TemporaryItem), and the lock, on the open file, stays held
        // under the intent's name after the rename.
        let recordName: String
        let fd: CInt
        do {
            (recordName, fd) = try TemporaryItem.makeLockedFile(for: name, purpose: "tmp", in: parent, mode: 0o600, using: fileSystem)
        } catch { throw fail(error.errno, "\(error.step) the rename intent “\(error.name)”") }
        var published = false
        defer {
            Glibc.close(fd)
            if !published { _ = try? fileSystem.unlink(recordName, in: parent) }
        }
        do throws(Errno) {
            try fileSystem.write(fd, record.data, name: recordName)
            if durable { try fileSystem.synchronize(fd, name: recordName) }
            // Published by a rename, not a hard link: file systems without hard links (some
            // FUSE, SMB) are exactly those that tend to lack RENAME_EXCHANGE too.
            do throws(Errno) { try fileSystem.renameWithoutReplacing(recordName, in: parent, to: intentName, in: parent) } catch {
                guard Self.isUnsupported(error) else { throw error }
                if (try? fileSystem.status(of: intentName, in: parent)) != nil { throw Errno.fileExists }
                try fileSystem.rename(recordName, in: parent, to: intentName, in: parent)
            }
            published = true
            if durable { try fileSystem.synchronizeDirectory(parent, name: parentPath) }
        } catch {
            // Only the record this save published is removed: an existing intent is another save's.
            if published { _ = try? fileSystem.unlink(intentName, in: parent) }
            throw fail(error, "writing the rename intent for the fallback swap")
        }
        // 2. Old tree aside.
        do { try fileSystem.rename(name, in: parent, to: oldName, in: parent) } catch {
            _ = try? fileSystem.unlink(intentName, in: parent)
            throw fail(error, "renaming the old package aside (fallback swap)")
        }
        // 3. New tree in; on failure put the old one back.
        do { try fileSystem.rename(temporaryName, in: parent, to: name, in: parent) } catch {
            do {
                try fileSystem.rename(oldName, in: parent, to: name, in: parent)
                _ = try? fileSystem.unlink(intentName, in: parent)
            } catch let undoError {
                throw DocumentKitError(
                    error, operation: .save, path: documentPath,
                    step: "renaming the new package in (fallback swap), and renaming the old one back failed too (\(undoError.readableDescription)); the next open completes the swap from “\(intentName)”",
                    originalIsIntact: false)
            }
            throw fail(error, "renaming the new package in (fallback swap)")
        }
        // 4. Durable; on failure put the old tree back, so the original is what stays.
        if durable {
            do { try fileSystem.synchronizeDirectory(parent, name: parentPath) } catch {
                do {
                    try fileSystem.rename(name, in: parent, to: temporaryName, in: parent)
                    try fileSystem.rename(oldName, in: parent, to: name, in: parent)
                    _ = try? fileSystem.unlink(intentName, in: parent)
                } catch let undoError {
                    throw DocumentKitError(
                        error, operation: .save, path: documentPath,
                        step: "flushing the folder after the fallback swap (fsync), and undoing it failed too (\(undoError.readableDescription))",
                        originalIsIntact: false)
                }
                throw fail(error, "flushing the folder after the fallback swap (fsync); the swap was undone")
            }
        }
        // 5. The old tree goes to the temporary name, for the caller to remove; the intent goes.
        do {
            try fileSystem.rename(oldName, in: parent, to: temporaryName, in: parent)
            try fileSystem.unlink(intentName, in: parent)
        } catch {
            // The new package is in place; the intent lets the next open or save finish the cleanup.
            Self.logger.warning("Save of \(documentPath) completed, cleanup deferred: \(error.readableDescription)")
        }
    }

    static func isUnsupported(_ error: Errno) -> Bool {
        error == .invalidArgument || error == .noFunction || error == .notSupported
    }
}
