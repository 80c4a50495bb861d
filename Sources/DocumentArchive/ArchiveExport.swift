#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FileCoordination
import FilePackages
import Foundation
import SystemPackage

/// How ``DocumentArchiver/export(itemsAt:to:options:coordinator:using:progress:)`` writes an archive.
public struct ArchiveExportOptions: Sendable {
    /// The archive's format. Default zip.
    public var format: ArchiveFormat
    /// Whether the same items give the same bytes: entries are always in byte order of their
    /// names; this also writes one fixed time (2000-01-01) for every entry and none in the gzip
    /// header. Default false (entries keep their modification times).
    public var isDeterministic: Bool
    /// How durable the archive is when the export returns. Default `.durable`.
    public var durability: Durability
    /// Leaves out an entry (and, for a folder, everything in it): gets its path in the archive,
    /// such as `Trip.note/attachments/map.png`.
    public var excluding: (@Sendable (String) -> Bool)?

    /// Export options.
    public init(
        format: ArchiveFormat = .zip, isDeterministic: Bool = false, durability: Durability = .durable,
        excluding: (@Sendable (String) -> Bool)? = nil
    ) {
        self.format = format
        self.isDeterministic = isDeterministic
        self.durability = durability
        self.excluding = excluding
    }
}

/// What an export wrote.
public struct ArchiveExportSummary: Sendable, Hashable {
    /// The archive written.
    public var archiveURL: URL
    /// Its format.
    public var format: ArchiveFormat
    /// The entries in it (files, folders, links).
    public var entryCount: Int
    /// The bytes of the files in it, uncompressed.
    public var memberBytes: Int64
    /// The archive's size.
    public var archiveBytes: Int64
}

/// Exports files and packages to archives and imports them back, safely.
///
/// An archive of items holds each item under its name: `Trip.note/Info.json`,
/// `Trip.note/body.md`... (`Formats/archive/v1/SPEC.md`). DocumentKit's temporary items are never
/// exported. These calls don't coordinate: `Document` and the library APIs wrap them in
/// coordinated reads and writes.
public enum DocumentArchiver {
    /// The time written for every entry of a deterministic export: 2000-01-01T00:00:00Z.
    public static let deterministicTime: Int64 = 946_684_800 * 1_000_000_000

    /// Writes the items at `urls` (files or packages, in one folder or several, with distinct
    /// names) to a new archive at `archiveURL`, streaming (memory does not grow with their
    /// size) and atomically: the archive appears whole or not at all, replacing a file there.
    ///
    /// With a `coordinator`, each item is read under a coordinated read of its own, taken in
    /// turn: a document being saved is captured before or after the save, never half-way, and
    /// a library of thousands of documents is not locked whole for the length of the export.
    ///
    /// Cancelling the task stops the export with a `cancelled` error and leaves nothing behind.
    public static func export(
        itemsAt urls: [URL], to archiveURL: URL, options: ArchiveExportOptions = ArchiveExportOptions(),
        coordinator: FileCoordinator? = nil, using fileSystem: FileSystem = .live, progress: ArchiveProgressHandler? = nil
    ) async throws(DocumentKitError) -> ArchiveExportSummary {
        let archivePath = archiveURL.standardizedFileURL.path
        var names = Set<String>()
        var roots: [(parent: Descriptor, name: String, path: String)] = []
        for url in urls {
            let path = url.standardizedFileURL.path
            let (parentPath, name) = splitPath(path)
            guard names.insert(name).inserted else {
                throw DocumentKitError(
                    .invalidArgument, operation: .save, path: archivePath,
                    detail: "Two items to export are named “\(name)”; an archive holds each item under its name.")
            }
            let fd: CInt
            do { fd = try fileSystem.open(parentPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "opening its folder")
            }
            roots.append((Descriptor(owning: fd), name, path))
        }
        roots.sort { UTF8Order.compare($0.name, $1.name) < 0 }
        let sortedRoots = roots
        return try await ArchiveThread.run(named: "dk.export") { cancellation throws(DocumentKitError) in
            try write(
                sortedRoots, to: archiveURL, archivePath: archivePath, options: options, coordinator: coordinator,
                fileSystem: fileSystem, progress: progress, cancellation: cancellation)
        }
    }

    /// The blocking part of ``export(itemsAt:to:options:coordinator:using:progress:)``, on a thread of its own.
    private static func write(
        _ roots: [(parent: Descriptor, name: String, path: String)], to archiveURL: URL, archivePath: String,
        options: ArchiveExportOptions, coordinator: FileCoordinator?, fileSystem: FileSystem,
        progress: ArchiveProgressHandler?, cancellation: CancellationFlag
    ) throws(DocumentKitError) -> ArchiveExportSummary {
        var walk = ExportWalk(options: options, fileSystem: fileSystem, progress: progress)
        walk.cancellation = cancellation
        if progress != nil {
            for root in roots { try walk.count(root.name, in: root.parent.rawValue, path: root.path, entryPath: root.name) }
        }
        var summary = ArchiveExportSummary(
            archiveURL: URL(fileURLWithPath: archivePath), format: options.format, entryCount: 0, memberBytes: 0, archiveBytes: 0)
        let status = try UTF8Locale.run { () throws(DocumentKitError) -> FileStatus in
            try StreamedFileSave.write(to: archiveURL, durability: options.durability, using: fileSystem) {
            (fd, temporaryName) throws(DocumentKitError) in
            let writer: ArchiveWriter
            do throws(ArchiveFailure) {
                writer = try ArchiveWriter(
                    fd: fd, name: temporaryName, format: options.format, deterministic: options.isDeterministic,
                    fileSystem: fileSystem)
            } catch { throw error.documentKitError(.save, archivePath, step: "starting the archive") }
            walk.writer = writer
            for root in roots {
                guard let coordinator else {
                    try walk.export(root.name, in: root.parent.rawValue, path: root.path, entryPath: root.name)
                    continue
                }
                do {
                    try coordinator.coordinate(readingItemAt: URL(fileURLWithPath: root.path)) { _ in
                        try walk.export(root.name, in: root.parent.rawValue, path: root.path, entryPath: root.name)
                    }
                } catch let error as DocumentKitError {
                    throw error
                } catch {
                    throw DocumentKitError(.other, operation: .read, path: root.path, step: "coordinating the read", underlyingError: error)
                }
            }
            do throws(ArchiveFailure) { try writer.finish() } catch { throw error.documentKitError(.save, archivePath, step: "finishing the archive") }
            summary.entryCount = walk.reporter.progress.completedEntries
            summary.memberBytes = walk.reporter.progress.completedBytes
            walk.reporter.report(force: true)
            }
        }
        summary.archiveBytes = status.size
        return summary
    }

    /// Splits a path at its last slash.
    static func splitPath(_ path: String) -> (parent: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let parent = path[..<slash]
        return (parent.isEmpty ? "/" : String(parent), String(path[path.index(after: slash)...]))
    }
}

/// One export's walk of its items: counts them for progress, then writes them.
struct ExportWalk {
    let options: ArchiveExportOptions
    let fileSystem: FileSystem
    var writer: ArchiveWriter?
    var reporter: ProgressReporter
    /// The export's task was cancelled (the walk runs on a thread of its own).
    var cancellation: CancellationFlag?
    static let chunkSize = 1 << 20

    init(options: ArchiveExportOptions, fileSystem: FileSystem, progress: ArchiveProgressHandler?) {
        self.options = options
        self.fileSystem = fileSystem
        reporter = ProgressReporter(progress)
    }

    private func status(of name: String, in folder: CInt, path: String) throws(DocumentKitError) -> FileStatus {
        do { return try fileSystem.status(of: name, in: folder) } catch {
            throw DocumentKitError(error, operation: .read, path: path, step: "reading its status")
        }
    }

    private func children(of fd: CInt, path: String) throws(DocumentKitError) -> [String] {
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(fd, name: path, rejectingInvalidUTF8: true) } catch {
            throw DocumentKitError(error, operation: .read, path: path, step: "listing the folder")
        }
        return names.filter { !EntryPath.isTemporaryName($0) }.sorted { UTF8Order.compare($0, $1) < 0 }
    }

    private func openFolder(_ name: String, in folder: CInt, path: String) throws(DocumentKitError) -> Descriptor {
        do { return Descriptor(owning: try fileSystem.open(name, in: folder, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
            throw DocumentKitError(error, operation: .read, path: path, step: "opening the folder")
        }
    }

    /// Adds up the entries and bytes to export, for progress reports.
    mutating func count(_ name: String, in folder: CInt, path: String, entryPath: String) throws(DocumentKitError) {
        if let excluding = options.excluding, excluding(entryPath) { return }
        let status = try status(of: name, in: folder, path: path)
        reporter.progress.totalEntries = (reporter.progress.totalEntries ?? 0) + 1
        if status.kind == .regular { reporter.progress.totalBytes = (reporter.progress.totalBytes ?? 0) + status.size }
        guard status.kind == .directory else { return }
        let fd = try openFolder(name, in: folder, path: path)
        for child in try children(of: fd.rawValue, path: path) {
            try count(child, in: fd.rawValue, path: path + "/" + child, entryPath: entryPath + "/" + child)
        }
    }

    private func checkCancellation(_ path: String) throws(DocumentKitError) {
        if Task.isCancelled || cancellation?.isCancelled == true {
            throw DocumentKitError(
                .cancelled, operation: .save, path: path, originalIsIntact: true, detail: "The export was cancelled; nothing was written.")
        }
    }

    /// Writes the item `name` of `folder` and, for a folder, everything in it.
    mutating func export(_ name: String, in folder: CInt, path: String, entryPath: String) throws(DocumentKitError) {
        if let excluding = options.excluding, excluding(entryPath) { return }
        try checkCancellation(path)
        guard let writer else { return }
        let status = try status(of: name, in: folder, path: path)
        let time = options.isDeterministic ? DocumentArchiver.deterministicTime : status.modificationTime
        let permissions = status.permissions & 0o777
        func header(_ kind: EntryKind, size: Int64 = 0, target: String? = nil) throws(DocumentKitError) {
            do {
                try writer.writeHeader(
                    path: entryPath, kind: kind, size: size, permissions: permissions, modificationTime: time, linkTarget: target)
            } catch { throw error.documentKitError(.save, path, step: "writing the archive entry “\(entryPath)”", entry: entryPath) }
        }
        switch status.kind {
        case .regular:
            let fd: CInt
            do { fd = try fileSystem.open(name, in: folder, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "opening the file")
            }
            defer { Glibc.close(fd) }
            let opened: FileStatus
            do { opened = try fileSystem.status(of: fd, name: path) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "reading its status")
            }
            guard opened.kind == .regular, opened.device == status.device, opened.inode == status.inode else {
                throw changed(path)
            }
            try header(.file, size: opened.size)
            try copy(fd, size: opened.size, path: path, entryPath: entryPath)
        case .directory:
            try header(.folder)
            let fd = try openFolder(name, in: folder, path: path)
            for child in try children(of: fd.rawValue, path: path) {
                try export(child, in: fd.rawValue, path: path + "/" + child, entryPath: entryPath + "/" + child)
            }
        case .symbolicLink:
            let target: String
            do { target = try fileSystem.readLink(name, in: folder) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "reading the symbolic link")
            }
            try header(.symbolicLink, target: target)
        default:
            throw DocumentKitError(
                .unsupportedFileType, operation: .read, path: path,
                detail: "Only files, folders and symbolic links can be exported; this is a \(status.kind).")
        }
        reporter.progress.completedEntries += 1
        reporter.report()
    }

    /// Streams `size` bytes of the open file into the current entry, in chunks.
    private mutating func copy(_ fd: CInt, size: Int64, path: String, entryPath: String) throws(DocumentKitError) {
        guard let writer else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            try checkCancellation(path)
            let wanted = Int(min(Int64(buffer.count), max(size - offset, 1)))
            let count: Int
            do { count = try fileSystem.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset, name: path) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "reading the file")
            }
            if count == 0 { break }
            guard offset + Int64(count) <= size else { throw changed(path) }
            do { try writer.writeData(UnsafeRawBufferPointer(rebasing: buffer[..<count])) } catch {
                throw error.documentKitError(.save, path, step: "writing the archive entry “\(entryPath)”", entry: entryPath)
            }
            offset += Int64(count)
            reporter.progress.completedBytes += Int64(count)
            reporter.report()
        }
        guard offset == size else { throw changed(path) }
    }

    private func changed(_ path: String) -> DocumentKitError {
        DocumentKitError(
            .changedSinceRead, operation: .read, path: path,
            detail: "It changed while it was exported (another program wrote it in place); export again.")
    }
}

extension ArchiveFailure {
    /// This failure as DocumentKit's error about `path` (the document or archive).
    func documentKitError(_ operation: DocumentKitError.Operation, _ path: String, step: String, entry: String? = nil) -> DocumentKitError {
        var error: DocumentKitError
        switch self {
        case .system(let errno): error = DocumentKitError(errno, operation: operation, path: path, step: step)
        case .message(let text): error = DocumentKitError(.corruptData, operation: operation, path: path, step: step, detail: "libarchive: \(text)")
        }
        error.archiveEntry = entry
        return error
    }
}
