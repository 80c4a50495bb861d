#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import SystemPackage

/// Extracts an archive into a staging folder it owns, entry by entry, refusing anything that
/// could reach outside it and stopping at the first limit passed. It writes every entry itself
/// (`openat` under folders it made, `O_NOFOLLOW`, `O_EXCL`), never through libarchive's disk
/// writer, so no entry is ever written through a link or over another.
struct ArchiveExtraction {
    let archivePath: String
    let staging: CInt
    let limits: ArchiveLimits
    let durable: Bool
    let fileSystem: FileSystem

    enum Kind { case file, folder, link }

    /// Every path made so far (joined by "/") and what it is.
    private(set) var kinds: [String: Kind] = [:]
    /// Names (as the archive spells them) of entries made empty without reading their data.
    var emptyWithoutReading: Set<String> = []
    /// The symbolic links made, by path: their targets.
    private(set) var links: [String: String] = [:]
    /// The top-level names, in the order they first appeared.
    private(set) var topLevel: [String] = []
    /// The modification times the archive gives its entries, applied once everything is made
    /// (a folder's time changes as entries are made in it).
    private var times: [(path: String, time: Int64)] = []
    /// The open folders down to the last entry's parent: `open[0]` is the staging folder.
    private var openPath: [String] = []
    private var openFolders: [CInt] = []
    private var reporter: ProgressReporter

    init(
        archivePath: String, staging: CInt, limits: ArchiveLimits, durable: Bool, fileSystem: FileSystem,
        progress: ArchiveProgressHandler?
    ) {
        self.archivePath = archivePath
        self.staging = staging
        self.limits = limits
        self.durable = durable
        self.fileSystem = fileSystem
        reporter = ProgressReporter(progress)
        openFolders = [staging]
    }

    /// An error about the archive and one of its entries.
    func refuse(_ code: DocumentKitError.Code, _ entry: String, _ detail: String) -> DocumentKitError {
        var error = DocumentKitError(code, operation: .read, path: archivePath, step: "extracting the entry “\(entry)”", detail: detail)
        error.archiveEntry = entry
        return error
    }

    private func systemError(_ errno: Errno, _ entry: String, _ step: String) -> DocumentKitError {
        var error = DocumentKitError(errno, operation: .read, path: archivePath, step: "\(step) for the entry “\(entry)”")
        error.archiveEntry = entry
        return error
    }

    /// Reads every entry of `reader` and makes it under the staging folder.
    mutating func run(_ reader: ArchiveReader) throws(DocumentKitError) {
        defer { try? closeFolders(downTo: 1, flushing: false) }
        var entryCount = 0
        while true {
            try checkCancellation()
            let header: ArchiveEntryHeader?
            do { header = try reader.nextEntry() } catch {
                throw error.documentKitError(.read, archivePath, step: "reading the entry after “\(reporter.progress.completedEntries)” entries")
            }
            guard let header else {
                do { try reader.finish(limit: max(limits.compressionRatioGrace, 1 << 20)) } catch {
                    throw error.documentKitError(.read, archivePath, step: "reading the end of the archive")
                }
                break
            }
            let shown = header.path ?? String(decoding: header.rawPath, as: UTF8.self)
            entryCount += 1
            guard entryCount <= limits.maximumEntryCount else {
                throw refuse(.archiveLimitExceeded, shown, "The archive has more than \(limits.maximumEntryCount) entries, the limit.")
            }
            guard let path = header.path else {
                throw refuse(.unsafeArchiveEntry, shown, "Its name is not valid UTF-8.")
            }
            let components: [String]
            do { components = try EntryPath.components(of: path, limits: limits) } catch {
                throw refuse(error.isLimit ? .archiveLimitExceeded : .unsafeArchiveEntry, path, error.reason)
            }
            if components.isEmpty {
                // `./`: the destination itself, which exists. Anything but a folder there is refused.
                guard header.fileType == EntryKind.folder.fileType else {
                    throw refuse(.unsafeArchiveEntry, path, "Its name names the destination itself, and it is no folder.")
                }
            } else {
                try make(header, at: components, shown: path, reader: reader)
                if let time = header.modificationTime, kinds[components.joined(separator: "/")] != nil {
                    times.append((components.joined(separator: "/"), time))
                }
            }
            reporter.progress.completedEntries += 1
            reporter.report()
        }
        try closeFolders(downTo: 1, flushing: durable)
        // Deepest first, so that setting a folder's time is the last change in it. A time that
        // can't be set (a file system without them) is not an error: the contents are what counts.
        for (path, time) in times.sorted(by: { $0.path.utf8.count > $1.path.utf8.count }) {
            try? fileSystem.setModificationTime(path, in: staging, to: time)
        }
        // A link is checked once every link is known: one made later can change where an
        // earlier one leads.
        for (path, target) in links.sorted(by: { $0.key < $1.key })
        where !EntryPath.linkStaysInside(path.split(separator: "/").map(String.init), target: target, links: links) {
            throw refuse(.unsafeArchiveEntry, path, "It is a symbolic link to “\(target)”, which leads out of the destination.")
        }
        if durable {
            do { try fileSystem.synchronizeDirectory(staging, name: archivePath) } catch {
                throw systemError(error, topLevel.first ?? "", "flushing the staging folder")
            }
        }
        reporter.report(force: true)
    }

    private func checkCancellation() throws(DocumentKitError) {
        if Task.isCancelled {
            throw DocumentKitError(
                .cancelled, operation: .read, path: archivePath, originalIsIntact: true,
                detail: "The import was cancelled; nothing was imported.")
        }
    }

    /// Makes one entry.
    private mutating func make(_ header: ArchiveEntryHeader, at components: [String], shown: String, reader: ArchiveReader)
        throws(DocumentKitError)
    {
        let path = components.joined(separator: "/")
        let name = components[components.count - 1]
        if components.count == 1, kinds[path] == nil { topLevel.append(path) }
        let isFolder = header.fileType == EntryKind.folder.fileType
        if let existing = kinds[path] {
            // A folder named twice (or made implicitly, then named) is one folder.
            guard isFolder, existing == .folder else {
                throw refuse(.unsafeArchiveEntry, shown, "The archive has two entries named “\(path)”; one would overwrite the other.")
            }
            return
        }
        let parent = try folder(Array(components.dropLast()), shown: shown)
        if let target = header.hardLinkTarget, header.fileType != EntryKind.symbolicLink.fileType {
            try makeHardLink(name, in: parent, path: path, target: target, shown: shown)
            return
        }
        switch header.fileType {
        case EntryKind.folder.fileType:
            do { try fileSystem.makeDirectory(name, in: parent, mode: 0o755) } catch {
                throw systemError(error, shown, "making the folder")
            }
            kinds[path] = .folder
        case EntryKind.file.fileType:
            try makeFile(name, in: parent, path: path, header: header, shown: shown, reader: reader)
        case EntryKind.symbolicLink.fileType:
            guard let target = header.symbolicLinkTarget, !target.isEmpty, target.utf8.count <= limits.maximumPathBytes else {
                throw refuse(.unsafeArchiveEntry, shown, "It is a symbolic link without a valid target.")
            }
            guard !target.hasPrefix("/") else {
                throw refuse(.unsafeArchiveEntry, shown, "It is a symbolic link to the absolute path “\(target)”, outside the destination.")
            }
            do { try fileSystem.makeSymbolicLink(name, in: parent, pointingTo: target) } catch {
                throw systemError(error, shown, "making the symbolic link")
            }
            kinds[path] = .link
            links[path] = target
        default:
            let kind =
                switch header.fileType {
                case 0o020000: "a character device"
                case 0o060000: "a block device"
                case 0o010000: "a FIFO"
                case 0o140000: "a socket"
                default: "an item of unknown kind (\(String(header.fileType, radix: 8)))"
                }
            throw refuse(.unsafeArchiveEntry, shown, "It is \(kind); only files, folders and links are imported.")
        }
    }

    private mutating func makeHardLink(_ name: String, in parent: CInt, path: String, target: String, shown: String)
        throws(DocumentKitError)
    {
        let components: [String]
        do { components = try EntryPath.components(of: target, limits: limits) } catch {
            throw refuse(.unsafeArchiveEntry, shown, "It is a hard link to “\(target)”: \(error.reason)")
        }
        let targetPath = components.joined(separator: "/")
        guard kinds[targetPath] == .file else {
            throw refuse(
                .unsafeArchiveEntry, shown, "It is a hard link to “\(target)”, which is no file extracted before it from this archive.")
        }
        // Every folder on the target's path was made by this extraction (kinds), never a link.
        do { try fileSystem.link(targetPath, in: staging, as: name, in: parent) } catch {
            throw systemError(error, shown, "making the hard link")
        }
        kinds[path] = .file
    }

    private mutating func makeFile(
        _ name: String, in parent: CInt, path: String, header: ArchiveEntryHeader, shown: String, reader: ArchiveReader
    ) throws(DocumentKitError) {
        if let size = header.size, size > limits.maximumEntryBytes {
            throw refuse(.archiveLimitExceeded, shown, "It says it holds \(size) bytes, over the limit of \(limits.maximumEntryBytes) per entry.")
        }
        // Owner read and write always; no set-ID, sticky or group and other write bits.
        let mode = mode_t((header.permissions & 0o755) | 0o600)
        let fd: CInt
        do { fd = try fileSystem.open(name, in: parent, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode) } catch {
            throw systemError(error, shown, "creating the file")
        }
        kinds[path] = .file
        defer { Glibc.close(fd) }
        if emptyWithoutReading.contains(shown), header.size == 0 { return }
        var written: Int64 = 0
        var zeros: UnsafeMutableRawBufferPointer?
        defer { zeros?.deallocate() }
        while true {
            try checkCancellation()
            let block: (bytes: UnsafeRawBufferPointer, offset: Int64)?
            do { block = try reader.nextBlock() } catch {
                throw error.documentKitError(.read, archivePath, step: "reading the entry “\(shown)”", entry: shown)
            }
            guard let block else { break }
            // A sparse entry's holes are written as zeros, and counted.
            while written < block.offset {
                if zeros == nil { zeros = Self.zeroBuffer() }
                guard let zeros else { break }
                let count = Int(min(Int64(zeros.count), block.offset - written))
                try write(fd, UnsafeRawBufferPointer(rebasing: zeros[..<count]), shown: shown, entryBytes: &written, reader: reader)
            }
            try write(fd, block.bytes, shown: shown, entryBytes: &written, reader: reader)
        }
        // A sparse file's last hole: zeros up to the size its header gives.
        if header.isSparse, let size = header.size, written < size {
            zeros = zeros ?? Self.zeroBuffer()
            while let zeros, written < size {
                let count = Int(min(Int64(zeros.count), size - written))
                try write(fd, UnsafeRawBufferPointer(rebasing: zeros[..<count]), shown: shown, entryBytes: &written, reader: reader)
            }
        }
        if let size = header.size, size != written {
            throw refuse(.corruptData, shown, "Its header says \(size) bytes, but its data holds \(written).")
        }
        if durable {
            do { try fileSystem.synchronize(fd, name: shown) } catch { throw systemError(error, shown, "flushing the file (fsync)") }
        }
    }

    /// 64 KiB of zeros, for holes (the caller deallocates it).
    private static func zeroBuffer() -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer
    }

    /// Writes a block of an entry, counting it against the limits first.
    private mutating func write(
        _ fd: CInt, _ bytes: UnsafeRawBufferPointer, shown: String, entryBytes: inout Int64, reader: ArchiveReader
    ) throws(DocumentKitError) {
        guard !bytes.isEmpty else { return }
        let count = Int64(bytes.count)
        if entryBytes + count > limits.maximumEntryBytes {
            throw refuse(.archiveLimitExceeded, shown, "It expands past \(limits.maximumEntryBytes) bytes, the limit per entry.")
        }
        let total = reporter.progress.completedBytes + count
        if total > limits.maximumTotalBytes {
            throw refuse(.archiveLimitExceeded, shown, "The archive expands past \(limits.maximumTotalBytes) bytes, the limit.")
        }
        let consumed = max(reader.source.consumed, 1)
        if total > limits.compressionRatioGrace, Double(total) > limits.maximumCompressionRatio * Double(consumed) {
            throw refuse(
                .archiveLimitExceeded, shown,
                "The archive expands \(Int(Double(total) / Double(consumed))) times its size (\(total) bytes from \(consumed)), "
                    + "over the limit of \(Int(limits.maximumCompressionRatio)): a decompression bomb?")
        }
        do { try fileSystem.write(fd, bytes, name: shown) } catch { throw systemError(error, shown, "writing the file") }
        entryBytes += count
        reporter.progress.completedBytes = total
        reporter.report()
    }

    /// The open folder at `components` under the staging folder, made if the archive did not
    /// name it first. Folders on the way to the previous entry stay open.
    private mutating func folder(_ components: [String], shown: String) throws(DocumentKitError) -> CInt {
        var common = 0
        while common < min(components.count, openPath.count), components[common] == openPath[common] { common += 1 }
        try closeFolders(downTo: common + 1, flushing: durable)
        for index in common..<components.count {
            let path = components[...index].joined(separator: "/")
            let name = components[index]
            let parent = openFolders[openFolders.count - 1]
            switch kinds[path] {
            case .folder: break
            case nil:
                do { try fileSystem.makeDirectory(name, in: parent, mode: 0o755) } catch {
                    throw systemError(error, shown, "making the folder “\(path)”")
                }
                kinds[path] = .folder
                if index == 0 { topLevel.append(path) }
            case .file, .link:
                throw refuse(.unsafeArchiveEntry, shown, "It would be written inside “\(path)”, which is a file or a link in this archive.")
            }
            let fd: CInt
            do { fd = try fileSystem.open(name, in: parent, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                throw systemError(error, shown, "opening the folder “\(path)”")
            }
            openFolders.append(fd)
            openPath.append(name)
        }
        return openFolders[openFolders.count - 1]
    }

    /// Closes the open folders beyond the first `count` (the staging folder stays open),
    /// flushing each first if `flushing` (a durable import).
    private mutating func closeFolders(downTo count: Int, flushing: Bool) throws(DocumentKitError) {
        while openFolders.count > max(count, 1) {
            let fd = openFolders.removeLast()
            let name = openPath.removeLast()
            defer { Glibc.close(fd) }
            if flushing {
                do { try fileSystem.synchronizeDirectory(fd, name: name) } catch {
                    throw systemError(error, name, "flushing the folder (fsync)")
                }
            }
        }
    }
}
