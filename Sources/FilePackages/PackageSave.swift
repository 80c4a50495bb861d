#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Logging

/// One atomic save of a package (see ``FileWrapper/write(to:options:)``).
struct PackageSave {
    let location: ItemLocation
    let current: FileStatus?
    let options: SaveOptions

    private var fileSystem: FileSystem { options.fileSystem }
    private var parent: CInt { location.parent.rawValue }
    private var path: String { location.path }

    func run(_ children: [String: FileWrapper], permissions: UInt32?) throws(DocumentKitError) -> FileWrapper {
        let durable = options.durability.isDurable
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: path, step: step, originalIsIntact: true)
        }

        // Lock the current tree: after the swap it sits at the temporary name until removed,
        // and the lock tells other processes' recovery that it is not litter.
        var currentTree: Descriptor?
        if current?.kind == .directory {
            if let fd = try? fileSystem.open(location.name, in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) {
                currentTree = Descriptor(owning: fd)
                try? fileSystem.lockExclusivelyWithoutWaiting(fd, name: path)
            }
        }
        defer { withExtendedLifetime(currentTree) {} }

        // 1. The temporary tree, locked from the first instant it bears its name (TemporaryItem);
        // or, to be exchanged across folders, the empty folder given for it.
        // A file being replaced by a package lends it no mode (a directory needs its search bits).
        let currentPermissions = current?.kind == .directory ? current?.permissions : nil
        let mode = mode_t(permissions ?? currentPermissions ?? 0o777)
        var exchange: ExchangeFolder?
        if let destination = options.replacedPackageExchange {
            exchange = try ExchangeFolder(destination, current: current, fileSystem: fileSystem, documentPath: path)
        }
        defer { withExtendedLifetime(exchange) {} }
        let temporaryName: String
        let root: CInt
        if let exchange {
            (temporaryName, root) = (exchange.name, exchange.root)
        } else {
            do {
                (temporaryName, root) = try TemporaryItem.makeLockedDirectory(
                    for: location.name, purpose: "new", in: parent, mode: mode, using: fileSystem)
            } catch {
                throw fail(error.errno, "\(error.step) the temporary package “\(error.name)”")
            }
        }
        let temporaryParent = exchange?.folder.rawValue ?? parent
        // Removed on failure, unless a failed swap left it for recovery to complete.
        var swapped = false
        defer {
            if !swapped { _ = try? removeItem(temporaryName, in: temporaryParent, using: fileSystem) }
        }
        let rootDescriptor = Descriptor(owning: root)
        let newRoot = TreeRoot(directory: rootDescriptor, path: path, isPackage: true, fileSystem: fileSystem)
        try Ownership(fileSystem: fileSystem).apply(
            to: root, current: current?.kind == .directory ? current : nil, requested: permissions, documentPath: path)

        // 2. Members: linked when unchanged, written otherwise; each folder flushed once.
        var builder = PackageBuilder(
            fileSystem: fileSystem, durable: options.durability.flushesEachItem, documentPath: path, newRoot: newRoot)
        builder.replacedTree = currentTree?.rawValue
        if let current, current.kind == .directory, current.userID != geteuid() || current.groupID != getegid() {
            builder.owner = (current.userID, current.groupID)
        }
        // Flushed each: the root and the caller's descriptors with the last files, all at once.
        var extra = [(item: FileSystem.FlushItem(fd: root, name: temporaryName, isDirectory: true), step: "flushing the new package (fsync)")]
        extra += options.flushedWithPackage.map { ($0, "flushing “\($0.name)” with the new package (fsync)") }
        let built = try builder.build(children, into: root, at: [], alsoFlushing: extra)
        // Flushing each item, the build flushed the tree; batched, one flush of the file system.
        if durable, !options.durability.flushesEachItem {
            // Batched: every member and folder of the new tree reaches the disk in one flush, before the swap.
            do { try fileSystem.synchronizeFileSystem(root, name: temporaryName) } catch {
                throw fail(error, "flushing the new package (syncfs)")
            }
        }

        if exchange != nil, let beforeExchange = options.beforeExchange { try beforeExchange() }

        // 3. The swap, then the old tree goes.
        var replacement = AtomicReplacement(
            fileSystem: fileSystem, parent: parent, parentPath: location.parentPath, name: location.name,
            documentPath: path, durable: durable, itemToReplace: options.itemToReplace)
        replacement.temporaryFolder = exchange.map { ($0.folder.rawValue, $0.folderPath) }
        let outcome: AtomicReplacement.Outcome
        do { outcome = try replacement.swap(temporaryName, itemExists: current != nil, isDirectory: true) } catch {
            // Not undone: the temporary tree may be what the rename intent rolls forward to.
            if error.originalIsIntact == false { swapped = true }
            throw error
        }
        swapped = true
        // Exchanged across folders, the replaced tree is where the caller wants it already.
        if exchange == nil, case .oldItemAtTemporaryName = outcome,
            !ReplacedItem(fileSystem: fileSystem, documentPath: path).move(temporaryName, in: parent, to: options.replacedItemDestination)
        {
            do { try removeItem(temporaryName, in: parent, using: fileSystem) } catch {
                AtomicReplacement.logger.warning(
                    "Saved \(path); removing the previous version failed (\(error.readableDescription)); it will be removed at the next open")
            }
        }
        let status = try? fileSystem.status(of: root, name: path)
        var saved = FileWrapper(
            storage: .directory(built), permissions: status?.permissions,
            modificationDate: status.map { Date(nanosecondsSince1970: $0.modificationTime) })
        saved.savedIdentity = status.map(FileIdentity.init)
        return saved
    }
}

/// One atomic save of a single file (see ``FileWrapper/write(to:options:)``).
struct FileSave {
    let location: ItemLocation
    let current: FileStatus?
    let options: SaveOptions

    private var fileSystem: FileSystem { options.fileSystem }
    private var parent: CInt { location.parent.rawValue }
    private var path: String { location.path }

    func run(_ wrapper: FileWrapper) throws(DocumentKitError) -> FileWrapper {
        let durable = options.durability.isDurable
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: path, step: step, originalIsIntact: true)
        }
        if let current, current.kind == .regular, current.linkCount > 1 {
            switch options.hardLinks {
            case .refuse:
                throw DocumentKitError(
                    .hardLinked, operation: .save, path: path, originalIsIntact: true,
                    detail: "It has \(current.linkCount - 1) other hard link(s), and the save was asked to refuse rather than detach them.")
            case .detach:
                AtomicReplacement.logger.notice(
                    "Saving \(path), which has \(current.linkCount - 1) other hard link(s): they keep the previous contents")
            }
        }
        // Contents not read yet (a large file read on its own) are copied in pieces, not loaded.
        var streamed: LazyFileContents?
        if case .lazy(let lazy) = wrapper.storage, lazy.loaded == nil { streamed = lazy }
        // Contents another layer produces (an archive being written) are written as produced.
        var produced: ProvidedFileContents?
        if case .provided(let provided) = wrapper.storage, provided.loaded == nil { produced = provided }
        var data: Data?
        if streamed == nil && produced == nil {
            do { data = try wrapper.regularFileContents } catch {
                var error = error
                error.operation = .save
                error.path = path
                error.originalIsIntact = true
                throw error
            }
        }
        let requested = wrapper.permissions
        let createMode = mode_t(current?.kind == .regular ? current!.permissions : (requested ?? 0o666))
        // Locked from the first instant it bears its name (TemporaryItem).
        let temporaryName: String
        let fd: CInt
        do {
            (temporaryName, fd) = try TemporaryItem.makeLockedFile(
                for: location.name, purpose: "tmp", in: parent, mode: createMode, using: fileSystem)
        } catch { throw fail(error.errno, "\(error.step) the temporary file “\(error.name)”") }
        var swapped = false
        var closed = false
        defer {
            if !closed { Glibc.close(fd) }
            if !swapped { _ = try? fileSystem.unlink(temporaryName, in: parent) }
        }
        try Ownership(fileSystem: fileSystem).apply(
            to: fd, current: current?.kind == .regular ? current : nil, requested: requested, documentPath: path)
        if let data {
            do { try fileSystem.write(fd, data, name: temporaryName) } catch { throw fail(error, "writing the new contents") }
        } else if let produced {
            do throws(DocumentKitError) {
                try produced.forEachChunk { (bytes) throws(DocumentKitError) in
                    do throws(Errno) { try fileSystem.write(fd, bytes, name: temporaryName) } catch { throw fail(error, "writing the new contents") }
                }
            } catch {
                var error = error
                error.operation = .save
                error.path = path
                error.originalIsIntact = true
                throw error
            }
        } else if let streamed {
            do throws(DocumentKitError) { try streamed.copy(to: fd, destinationPath: temporaryName, using: fileSystem) } catch {
                if error.code != .changedSinceRead, let errno = error.errno, error.operation == .save {
                    throw fail(errno, "writing the new contents")
                }
                var error = error
                error.operation = .save
                error.path = path
                error.step = "copying the contents from “\(streamed.origin.displayPath)”"
                error.originalIsIntact = true
                throw error
            }
        }
        if durable {
            do { try fileSystem.synchronize(fd, name: temporaryName) } catch {
                throw fail(error, "flushing the new contents to disk (fsync)")
            }
        }
        let replacement = AtomicReplacement(
            fileSystem: fileSystem, parent: parent, parentPath: location.parentPath, name: location.name,
            documentPath: path, durable: durable, itemToReplace: options.itemToReplace)
        // The replaced file is kept by a hard link taken before the swap.
        let keeper = ReplacedItem(fileSystem: fileSystem, documentPath: path)
        let keptLink = current?.kind == .regular && keeper.link(location.name, in: parent, to: options.replacedItemDestination)
        // A package replaced by a file needs the journaled swap where exchange is missing:
        // a file can't be renamed over a directory.
        let outcome: AtomicReplacement.Outcome
        do {
            outcome = try replacement.swap(temporaryName, itemExists: current != nil, isDirectory: current?.kind == .directory)
        } catch {
            if error.originalIsIntact == false { swapped = true }
            if keptLink { keeper.unlink(options.replacedItemDestination) }
            throw error
        }
        swapped = true
        if case .oldItemAtTemporaryName = outcome {
            do { try removeItem(temporaryName, in: parent, using: fileSystem) } catch {
                AtomicReplacement.logger.warning(
                    "Saved \(path); removing the previous version failed (\(error.readableDescription)); it will be removed at the next open")
            }
        }
        let status = try? fileSystem.status(of: fd, name: path)
        closed = true
        do { try fileSystem.close(fd, name: temporaryName) } catch {
            AtomicReplacement.logger.warning("Saved \(path); closing it reported \(error.readableDescription)")
        }
        guard let status else {
            // The new file's identity is unknown: its bytes are kept (read back if they were streamed).
            let contents: Data
            if let data { contents = data } else { contents = try wrapper.regularFileContents }
            return FileWrapper(regularFileWithContents: contents, permissions: requested)
        }
        let root = TreeRoot(directory: location.parent, path: location.parentPath, isPackage: false, fileSystem: fileSystem)
        let origin = FileOrigin(root: root, components: [location.name], identity: status.identity, permissions: status.permissions)
        return FileWrapper(
            storage: .lazy(LazyFileContents(origin: origin, mapped: false, preloaded: data, fileSystem: fileSystem)),
            permissions: status.permissions, modificationDate: Date(nanosecondsSince1970: status.modificationTime))
    }
}
