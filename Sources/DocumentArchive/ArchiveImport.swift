#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FileCoordination
import FilePackages
import Foundation
import SystemPackage

/// What an import does when an item of the same name is already in the destination folder.
public enum ExistingItemPolicy: Sendable, Hashable {
    /// Imports under the first free name "NAME (2).EXT", "NAME (3).EXT"... The default.
    case importAsCopy
    /// Refuses with an `alreadyExists` error (nothing is imported).
    case refuse
}

/// How ``DocumentArchiver/extract(archiveAt:into:options:using:progress:)`` imports an archive.
public struct ArchiveImportOptions: Sendable {
    /// The limits the extraction enforces. Default ``ArchiveLimits/default``.
    public var limits: ArchiveLimits
    /// How durable the imported items are when the import returns. Default `.durable`.
    public var durability: Durability
    /// What happens when an item's name is taken. Default ``ExistingItemPolicy/importAsCopy``.
    public var existingItems: ExistingItemPolicy

    /// Import options.
    public init(limits: ArchiveLimits = .default, durability: Durability = .durable, existingItems: ExistingItemPolicy = .importAsCopy) {
        self.limits = limits
        self.durability = durability
        self.existingItems = existingItems
    }
}

/// An item of an archive, extracted and checked, in a hidden staging folder of its destination.
public struct StagedItem: Sendable, Hashable {
    /// Its name in the archive (the top-level name): `Trip.note`.
    public let name: String
    /// Where it is while staged: read it (to verify it) but don't keep the URL.
    public let url: URL
    /// Whether it is a folder (a package, or a folder of them).
    public let isFolder: Bool
}

/// An archive extracted into a hidden, locked staging folder inside its destination, not yet
/// moved in. Move its items in with ``moveIn(_:as:policy:coordinator:)``; what is not moved in is removed
/// by ``discard()`` (or when the value is released, or by the next save in the folder after a
/// crash).
public final class StagedArchive {
    /// The archive the items came from.
    public let archiveURL: URL
    /// The folder the items go to.
    public let destinationURL: URL
    /// The archive's top-level items, in byte order of their names.
    public let items: [StagedItem]
    private let destination: Descriptor
    private let staging: Descriptor
    private let stagingName: String
    private let durable: Bool
    private let fileSystem: FileSystem
    private var isDiscarded = false

    init(
        archiveURL: URL, destinationURL: URL, items: [StagedItem], destination: Descriptor, staging: Descriptor, stagingName: String,
        durable: Bool, fileSystem: FileSystem
    ) {
        self.archiveURL = archiveURL
        self.destinationURL = destinationURL
        self.items = items
        self.destination = destination
        self.staging = staging
        self.stagingName = stagingName
        self.durable = durable
        self.fileSystem = fileSystem
    }

    deinit { discard() }

    /// Moves `item` into the destination folder as `name` (default: its own), atomically: the
    /// item appears whole or not at all, and never replaces anything. A taken name gives "NAME
    /// (2).EXT" and so on under ``ExistingItemPolicy/importAsCopy``, an error under `refuse`.
    /// With a `coordinator`, each name is tried under a coordinated write of it.
    ///
    /// - Returns: The item's URL in the destination folder.
    @discardableResult
    public func moveIn(
        _ item: StagedItem, as name: String? = nil, policy: ExistingItemPolicy = .importAsCopy, coordinator: FileCoordinator? = nil
    ) throws(DocumentKitError) -> URL {
        let wanted = name ?? item.name
        let destinationPath = destinationURL.standardizedFileURL.path
        guard !isDiscarded else {
            throw DocumentKitError(.invalidArgument, operation: .create, path: destinationPath, detail: "The staged archive was discarded.")
        }
        guard !wanted.isEmpty, !wanted.contains("/"), wanted != ".", wanted != "..", !EntryPath.isTemporaryName(wanted) else {
            throw DocumentKitError(.invalidArgument, operation: .create, path: destinationPath, detail: "“\(wanted)” is not a valid name.")
        }
        for attempt in 1...10_000 {
            let candidate = attempt == 1 ? wanted : Self.copyName(wanted, number: attempt)
            let path = destinationPath == "/" ? "/" + candidate : destinationPath + "/" + candidate
            let moved = try move(item.name, to: candidate, path: path, coordinator: coordinator)
            if case .failure(let error) = moved {
                if error == .fileExists, policy == .importAsCopy { continue }
                if error == .fileExists {
                    throw DocumentKitError(
                        .alreadyExists, operation: .create, path: path, originalIsIntact: true,
                        detail: "An item of that name is there already; nothing was imported over it.")
                }
                throw DocumentKitError(error, operation: .create, path: path, step: "moving the imported item into place")
            }
            if durable {
                do { try fileSystem.synchronizeDirectory(destination.rawValue, name: destinationPath) } catch {
                    throw DocumentKitError(error, operation: .create, path: path, step: "flushing the folder (fsync)")
                }
            }
            return URL(fileURLWithPath: path)
        }
        throw DocumentKitError(.alreadyExists, operation: .create, path: destinationPath, detail: "No free name for a copy of “\(wanted)”.")
    }

    /// Renames the staged `name` to `candidate` in the destination without replacing anything,
    /// under a coordinated write of `path` if there is a coordinator: the rename's own failure
    /// is returned, a failure to coordinate thrown.
    private func move(_ name: String, to candidate: String, path: String, coordinator: FileCoordinator?)
        throws(DocumentKitError) -> Result<Void, Errno>
    {
        let rename = { [fileSystem, staging, destination] () -> Result<Void, Errno> in
            do throws(Errno) {
                try fileSystem.renameWithoutReplacing(name, in: staging.rawValue, to: candidate, in: destination.rawValue)
            } catch { return .failure(error) }
            return .success(())
        }
        guard let coordinator else { return rename() }
        do {
            return try coordinator.coordinate(writingItemAt: URL(fileURLWithPath: path), options: .forReplacing) { _ in rename() }
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw DocumentKitError(.other, operation: .create, path: path, step: "coordinating the write", underlyingError: error)
        }
    }

    /// "Trip (2).note" for "Trip.note"; "README (2)" for "README".
    public static func copyName(_ name: String, number: Int) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot]) (\(number))\(name[dot...])"
        }
        return "\(name) (\(number))"
    }

    /// Removes the staging folder and whatever was not moved in. Safe to call more than once.
    public func discard() {
        guard !isDiscarded else { return }
        isDiscarded = true
        try? removeItem(stagingName, in: destination.rawValue, using: fileSystem)
    }
}

extension DocumentArchiver {
    /// Extracts the archive at `archiveURL` into a hidden staging folder inside `folderURL`,
    /// checking every entry and every limit; nothing is visible in the folder yet. On any
    /// failure or cancellation nothing is left behind.
    ///
    /// - Throws: `DocumentKitError` with `unsafeArchiveEntry` (a hostile entry),
    ///   `archiveLimitExceeded` (a bomb), `corruptData` (a damaged archive; libarchive's message
    ///   in the detail), `cancelled`, or a system error; ``/DocumentKitSystem/DocumentKitError/archiveEntry`` names the entry.
    public static func extract(
        archiveAt archiveURL: URL, into folderURL: URL, options: ArchiveImportOptions = ArchiveImportOptions(),
        using fileSystem: FileSystem = .live, progress: ArchiveProgressHandler? = nil
    ) async throws(DocumentKitError) -> StagedArchive {
        let archivePath = archiveURL.standardizedFileURL.path
        let folderPath = folderURL.standardizedFileURL.path
        let archiveFD: CInt
        do { archiveFD = try fileSystem.open(archivePath, in: AT_FDCWD, flags: O_RDONLY) } catch {
            throw DocumentKitError(error, operation: .read, path: archivePath, step: "opening the archive")
        }
        let archiveFile = Descriptor(owning: archiveFD)
        let status: FileStatus
        do { status = try fileSystem.status(of: archiveFD, name: archivePath) } catch {
            throw DocumentKitError(error, operation: .read, path: archivePath, step: "reading its status")
        }
        guard status.kind == .regular else {
            throw DocumentKitError(.unsupportedFileType, operation: .read, path: archivePath, detail: "An archive is a file; this is a \(status.kind).")
        }
        let zipEntries = try zipEntries(archiveFile.rawValue, size: status.size, path: archivePath, fileSystem: fileSystem)
        let isZip = zipEntries != nil
        let destination: Descriptor
        do { destination = Descriptor(owning: try fileSystem.open(folderPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)) } catch {
            throw DocumentKitError(error, operation: .create, path: folderPath, step: "opening the destination folder")
        }
        let archiveName = splitPath(archivePath).name
        let stagingName: String
        let stagingFD: CInt
        do {
            (stagingName, stagingFD) = try TemporaryItem.makeLockedDirectory(
                for: archiveName, purpose: "new", in: destination.rawValue, mode: 0o700, using: fileSystem)
        } catch {
            throw DocumentKitError(error.errno, operation: .create, path: folderPath, step: "\(error.step) the staging folder “\(error.name)”")
        }
        let staging = Descriptor(owning: stagingFD)
        var extraction = ArchiveExtraction(
            archivePath: archivePath, staging: stagingFD, limits: options.limits, durable: options.durability.isDurable,
            fileSystem: fileSystem, progress: progress)
        // libarchive 3.6 fails to read the (empty) data of an empty LZMA member (method 14, as
        // Python's zipfile writes): those are made empty without reading it. The central
        // directory says they hold nothing, and the layout check bounded their data.
        extraction.emptyWithoutReading = Set(
            (zipEntries ?? []).filter { $0.method == 14 && $0.uncompressedSize == 0 && $0.crc32 == 0 }.map(\.name))
        do throws(DocumentKitError) {
            try UTF8Locale.run { () throws(DocumentKitError) in
                let reader: ArchiveReader
                do throws(ArchiveFailure) {
                    reader = try ArchiveReader(fd: archiveFile.rawValue, name: archivePath, size: status.size, isZip: isZip, fileSystem: fileSystem)
                } catch { throw error.documentKitError(.read, archivePath, step: "opening the archive") }
                try extraction.run(reader)
            }
        } catch {
            try? removeItem(stagingName, in: destination.rawValue, using: fileSystem)
            throw error
        }
        let stagingURL = URL(fileURLWithPath: folderPath).appendingPathComponent(stagingName, isDirectory: true)
        let items = extraction.topLevel.sorted { UTF8Order.compare($0, $1) < 0 }.map { name in
            StagedItem(
                name: name, url: stagingURL.appendingPathComponent(name), isFolder: extraction.kinds[name] == .folder)
        }
        return StagedArchive(
            archiveURL: URL(fileURLWithPath: archivePath), destinationURL: URL(fileURLWithPath: folderPath), items: items,
            destination: destination, staging: staging, stagingName: stagingName, durable: options.durability.isDurable,
            fileSystem: fileSystem)
    }

    /// Imports every top-level item of the archive into `folderURL`: ``extract(archiveAt:into:options:using:progress:)``,
    /// then `verify` on each staged item (throw to refuse the whole import), then each moved in
    /// under its name (see ``ExistingItemPolicy``).
    ///
    /// - Returns: Where the items are now.
    public static func importItems(
        from archiveURL: URL, into folderURL: URL, options: ArchiveImportOptions = ArchiveImportOptions(),
        using fileSystem: FileSystem = .live, progress: ArchiveProgressHandler? = nil,
        verify: ((StagedItem) throws(DocumentKitError) -> Void)? = nil
    ) async throws(DocumentKitError) -> [URL] {
        let staged = try await extract(archiveAt: archiveURL, into: folderURL, options: options, using: fileSystem, progress: progress)
        defer { staged.discard() }
        if let verify { for item in staged.items { try verify(item) } }
        // Cancelled before the first move: nothing is imported. Once moving, every item goes in
        // (each move is one rename), so that an import is never left half-way by a cancellation.
        if Task.isCancelled {
            throw DocumentKitError(
                .cancelled, operation: .read, path: archiveURL.standardizedFileURL.path, originalIsIntact: true,
                detail: "The import was cancelled; nothing was imported.")
        }
        var urls: [URL] = []
        for item in staged.items { urls.append(try staged.moveIn(item, policy: options.existingItems)) }
        return urls
    }

    /// Whether the file is a zip; refuses one whose entries overlap or disagree with its central directory.
    static func checkZipLayout(_ fd: CInt, size: Int64, path: String, fileSystem: FileSystem) throws(DocumentKitError) -> Bool {
        try zipEntries(fd, size: size, path: path, fileSystem: fileSystem) != nil
    }

    /// The entries of the zip file open at `fd`, checked (no overlapping data, local headers
    /// that agree with the central directory); nil if the file is no zip.
    static func zipEntries(_ fd: CInt, size: Int64, path: String, fileSystem: FileSystem) throws(DocumentKitError)
        -> [ZipLayoutCheck.Entry]?
    {
        let check = ZipLayoutCheck(fd: fd, name: path, size: size, fileSystem: fileSystem)
        do {
            guard try check.looksLikeZip() else { return nil }
            return try check.run()
        } catch {
            var result: DocumentKitError
            switch error {
            case .overlap(let first, let second):
                result = DocumentKitError(
                    .unsafeArchiveEntry, operation: .read, path: path, step: "checking the entry “\(second)”",
                    detail: "Its data overlaps that of “\(first)”: entries sharing compressed data are a zip bomb.")
                result.archiveEntry = second
            case .mismatch(let entry, let detail):
                result = DocumentKitError(
                    .unsafeArchiveEntry, operation: .read, path: path, step: "checking the entry “\(entry)”",
                    detail: "The zip's central directory and the entry disagree: \(detail).")
                result.archiveEntry = entry
            case .damaged(let detail):
                result = DocumentKitError(
                    .corruptData, operation: .read, path: path, step: "reading the zip's central directory",
                    detail: detail.prefix(1).uppercased() + detail.dropFirst() + ".")
            case .system(let errno):
                result = DocumentKitError(errno, operation: .read, path: path, step: "reading the zip's central directory")
            }
            throw result
        }
    }
}
