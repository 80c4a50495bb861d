#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Synchronization
import SystemPackage

/// A live file as it was when the store copied it: if a live member still has this identity, the
/// store file it was copied to holds its bytes. The file's ``/DocumentKitSystem/FileIdentity`` with its change time,
/// which changes whenever anything changes the file and can't be set (a file whose times were set
/// back, `touch -d`, `rsync -t`, doesn't match), and its mode.
struct SourceIdentity: Hashable, Sendable {
    var file: FileIdentity
    var permissions: UInt32

    init(_ status: FileStatus) {
        file = status.identity
        permissions = status.permissions
    }

    /// The change time, in nanoseconds.
    var changeTime: Int64 { file.changeTime ?? 0 }

    /// The same file whatever its change time (a hard link moves it).
    var ignoringChangeTime: SourceIdentity {
        var copy = self
        copy.file = file.withoutChangeTime
        return copy
    }
}

/// Per document, which store files hold the bytes of which live files (the newest version kept
/// in this process): a save links them instead of copying. A miss only costs a copy.
///
/// It knows at most ``documentLimit`` documents (``Generations`` of half as many each): a process
/// that saves a hundred thousand documents over months does not keep a map for each.
final class SharingCache: Sendable {
    /// Documents it remembers at most.
    static let documentLimit = 4_096

    private let byDocument: Mutex<Generations<[SourceIdentity: String]>>
    /// The entry (its path) this process last put in place for each document: where a new
    /// version of the document links from first.
    private let placed: Mutex<Generations<String>>

    init(documentLimit: Int = SharingCache.documentLimit) {
        byDocument = Mutex(Generations(limit: max(1, documentLimit / 2)))
        placed = Mutex(Generations(limit: max(1, documentLimit / 2)))
    }

    /// How many documents it remembers (for tests: it must stay bounded).
    var count: Int { byDocument.withLock { $0.count } + placed.withLock { $0.count } }

    func lookup(_ document: String) -> [SourceIdentity: String] { byDocument.withLock { $0.value(for: document) ?? [:] } }

    func replace(_ document: String, with map: [SourceIdentity: String]) {
        byDocument.withLock { $0.insert(map, for: document) }
    }

    func placedEntry(of document: String) -> String? { placed.withLock { $0.value(for: document) } }

    func rememberPlaced(_ entry: String, of document: String) {
        placed.withLock { $0.insert(entry, for: document) }
    }

    /// After a save linked the document's unchanged files into its new tree (which changes
    /// their `ctime`), takes their new identities: `current` are the files of the saved item.
    func refresh(_ document: String, current: [FileStatus]) {
        byDocument.withLock { maps in
            guard var map = maps.value(for: document), !map.isEmpty else { return }
            var byOldIdentity: [SourceIdentity: (SourceIdentity, String)] = [:]
            for (identity, path) in map { byOldIdentity[identity.ignoringChangeTime] = (identity, path) }
            for status in current {
                guard let (old, path) = byOldIdentity[SourceIdentity(status).ignoringChangeTime], status.changeTime > old.changeTime
                else { continue }
                map[SourceIdentity(status)] = path
            }
            maps.insert(map, for: document)
        }
    }
}

/// Copies an item into a version entry so that the entry never shares an inode with a file
/// outside the store (`Formats/version-store/v3`): each regular file is either a hard link to a
/// file of another stored version with the same bytes and mode, or a private copy.
struct PrivateCopy {
    let fileSystem: FileSystem
    let durable: Bool
    /// The item being kept, for messages.
    let itemPath: String
    /// What the newest stored version's files were copied from (see ``SharingCache``).
    let known: [SourceIdentity: String]
    /// What this copy's files were copied from, for the next save: paths relative to the entry.
    private(set) var made: [SourceIdentity: String] = [:]
    private(set) var linked = 0
    private(set) var copied = 0
    /// Files changed less than 2 s before this copy are not remembered by identity: a file
    /// written in the same clock tick, reusing a freed inode number, could have the same size and
    /// times with other bytes (git's "racily clean" rule). They are compared by bytes instead.
    private let trustedBefore = Int64(Date().timeIntervalSince1970 * 1e9) - 2_000_000_000

    init(fileSystem: FileSystem, durable: Bool, itemPath: String, known: [SourceIdentity: String]) {
        self.fileSystem = fileSystem
        self.durable = durable
        self.itemPath = itemPath
        self.known = known
    }

    private func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
        DocumentKitError(errno, operation: .save, path: itemPath, step: step, originalIsIntact: true)
    }

    /// Copies `name` in `source` as `destinationName` in `destination` (at `destinationPath`).
    /// `previous`: the same item in the newest stored version (its folder and name), whose files
    /// are linked instead of copied where the bytes are the same.
    /// `depth` is the folder level of `name` below the item (deeper than
    /// `FileWrapper.maximumDepth` is refused, as reading the item is).
    mutating func copy(
        _ name: String, in source: CInt, sourcePath: String, as destinationName: String, in destination: CInt,
        destinationPath: String, previous: (directory: CInt, name: String)?, depth: Int = 0
    ) throws(DocumentKitError) {
        let status: FileStatus
        do { status = try fileSystem.status(of: name, in: source) } catch {
            throw fail(error, "reading “\(sourcePath)” to keep it as a version")
        }
        switch status.kind {
        case .directory:
            guard depth <= FileWrapper.maximumDepth else {
                throw DocumentKitError(
                    .corruptData, operation: .save, path: itemPath, originalIsIntact: true,
                    detail: "It is nested deeper than \(FileWrapper.maximumDepth) levels (at “\(sourcePath)”): a version can't keep it.")
            }
            try copyDirectory(
                name, in: source, sourcePath: sourcePath, status: status, as: destinationName, in: destination,
                destinationPath: destinationPath, previous: previous, depth: depth)
        case .symbolicLink:
            do throws(Errno) {
                let target = try fileSystem.readLink(name, in: source)
                try fileSystem.makeSymbolicLink(destinationName, in: destination, pointingTo: target)
            } catch { throw fail(error, "copying the symbolic link “\(sourcePath)” into the version store") }
        case .regular:
            try copyFile(
                name, in: source, sourcePath: sourcePath, status: status, as: destinationName, in: destination,
                destinationPath: destinationPath, previous: previous)
        default:
            throw DocumentKitError(
                .unsupportedFileType, operation: .save, path: itemPath, originalIsIntact: true,
                detail: "“\(sourcePath)” is a \(status.kind): a version keeps only files, folders and symbolic links.")
        }
    }

    private mutating func copyDirectory(
        _ name: String, in source: CInt, sourcePath: String, status: FileStatus, as destinationName: String, in destination: CInt,
        destinationPath: String, previous: (directory: CInt, name: String)?, depth: Int
    ) throws(DocumentKitError) {
        let from: CInt
        do { from = try fileSystem.open(name, in: source, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
            throw fail(error, "opening the folder “\(sourcePath)” to keep it as a version")
        }
        defer { Glibc.close(from) }
        let to: CInt
        do throws(Errno) {
            try fileSystem.makeDirectory(destinationName, in: destination, mode: 0o700)
            to = try fileSystem.open(destinationName, in: destination, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        } catch { throw fail(error, "creating the folder “\(destinationPath)” in the version store") }
        defer { Glibc.close(to) }
        var previousFolder: CInt?
        if let previous {
            previousFolder = try? fileSystem.open(previous.name, in: previous.directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        }
        defer { if let previousFolder { Glibc.close(previousFolder) } }
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(from, name: sourcePath) } catch {
            throw fail(error, "listing the folder “\(sourcePath)” to keep it as a version")
        }
        for child in names.sorted() {
            var childPrevious: (directory: CInt, name: String)?
            if let previousFolder { childPrevious = (previousFolder, child) }
            try copy(
                child, in: from, sourcePath: sourcePath + "/" + child, as: child, in: to,
                destinationPath: destinationPath + "/" + child, previous: childPrevious, depth: depth + 1)
        }
        do throws(Errno) {
            try fileSystem.changeMode(to, to: status.permissions, name: destinationPath)
            if durable { try fileSystem.synchronizeDirectory(to, name: destinationPath) }
        } catch { throw fail(error, "finishing the folder “\(destinationPath)” in the version store") }
    }

    private mutating func copyFile(
        _ name: String, in source: CInt, sourcePath: String, status: FileStatus, as destinationName: String, in destination: CInt,
        destinationPath: String, previous: (directory: CInt, name: String)?
    ) throws(DocumentKitError) {
        let identity = SourceIdentity(status)
        // 1. A stored file copied from this very file, unchanged since.
        if let stored = known[identity], (try? fileSystem.link(stored, in: AT_FDCWD, as: destinationName, in: destination)) != nil {
            remember(identity, destinationPath)
            linked += 1
            return
        }
        // 2. The same member of the newest version, with the same mode and bytes.
        if let previous, (try? sameBytes(name, in: source, size: status.size, permissions: status.permissions, as: previous)) == true,
            (try? fileSystem.link(previous.name, in: previous.directory, as: destinationName, in: destination)) != nil
        {
            remember(identity, destinationPath)
            linked += 1
            return
        }
        // 3. A private copy, with the member's mode.
        let from: CInt
        do { from = try fileSystem.open(name, in: source, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            throw fail(error, "opening “\(sourcePath)” to keep it as a version")
        }
        defer { Glibc.close(from) }
        let to: CInt
        do {
            to = try fileSystem.open(destinationName, in: destination, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        } catch { throw fail(error, "creating “\(destinationPath)” in the version store") }
        do throws(Errno) {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { buffer.deallocate() }
            var offset: Int64 = 0
            while true {
                let count = try fileSystem.read(from, into: buffer, at: offset, name: sourcePath)
                if count == 0 { break }
                try fileSystem.write(to, UnsafeRawBufferPointer(rebasing: buffer[..<count]), name: destinationPath)
                offset += Int64(count)
            }
            try fileSystem.changeMode(to, to: status.permissions, name: destinationPath)
            if durable { try fileSystem.synchronize(to, name: destinationPath) }
        } catch {
            Glibc.close(to)
            throw fail(error, "copying “\(sourcePath)” into the version store")
        }
        do { try fileSystem.close(to, name: destinationPath) } catch {
            throw fail(error, "copying “\(sourcePath)” into the version store")
        }
        remember(identity, destinationPath)
        copied += 1
    }

    private mutating func remember(_ identity: SourceIdentity, _ path: String) {
        if identity.changeTime < trustedBefore { made[identity] = path }
    }

    /// Whether `name` in `source` has the same mode and bytes as the regular file `other`.
    private func sameBytes(
        _ name: String, in source: CInt, size: Int64, permissions: UInt32, as other: (directory: CInt, name: String)
    ) throws(Errno) -> Bool {
        let theirs = try fileSystem.status(of: other.name, in: other.directory)
        guard theirs.kind == .regular, theirs.size == size, theirs.permissions == permissions else { return false }
        let a = try fileSystem.open(name, in: source, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        defer { Glibc.close(a) }
        let b = try fileSystem.open(other.name, in: other.directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        defer { Glibc.close(b) }
        // Compared a piece at a time: a large member costs two buffers, not two copies of it.
        let chunk = Int(clamping: min(max(size, 1), Int64(LazyFileContents.chunkSize)))
        let mine = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { mine.deallocate() }
        let their = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { their.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            let count = try readFully(a, into: mine, at: offset, name: name)
            guard count > 0, try readFully(b, into: their, at: offset, name: other.name) == count,
                memcmp(mine.baseAddress!, their.baseAddress!, count) == 0
            else { return false }
            offset += Int64(count)
        }
        return true
    }

    /// Reads into `buffer` until it is full or the file ends; returns the bytes read.
    private func readFully(_ fd: CInt, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, name: String) throws(Errno) -> Int {
        var total = 0
        while total < buffer.count {
            let count = try fileSystem.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), at: offset + Int64(total), name: name)
            if count == 0 { break }
            total += count
        }
        return total
    }
}
