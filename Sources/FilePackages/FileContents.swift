#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Synchronization

/// The bytes of a regular file on disk, read when first asked for and then kept; or streamed in
/// pieces and not kept (hashing, copying into a save), so that a large file costs no memory.
package final class LazyFileContents: Sendable {
    package let origin: FileOrigin
    private let mapped: Bool
    /// The seam the file was read through, and is read through again.
    private let fileSystem: FileSystem
    private let cache = Mutex<Data?>(nil)

    /// The size of the pieces a file is streamed in: 1 MiB.
    package static let chunkSize = 1 << 20

    package init(origin: FileOrigin, mapped: Bool, preloaded: Data? = nil, fileSystem: FileSystem = .live) {
        self.origin = origin
        self.mapped = mapped
        self.fileSystem = fileSystem
        cache.withLock { $0 = preloaded }
    }

    private let copies = Mutex<FileOrigin?>(nil)

    /// The newest copy of these contents that a save made inside a package: the next save links
    /// from there (the first copy from a file outside a package is a real copy; later ones are links).
    package var latestPackageCopy: FileOrigin? { copies.withLock { $0 } }

    /// Records that a save put these contents at `origin`.
    package func recordCopy(at origin: FileOrigin) { copies.withLock { $0 = origin } }

    /// The contents if they were read already.
    package var loaded: Data? { cache.withLock { $0 } }

    /// Reads the contents (once), checking that the file is still the one that was read. If it
    /// is gone (a save replaced the package it was in), the newest copy a save made is read.
    package func data() throws(DocumentKitError) -> Data {
        if let data = loaded { return data }
        let data: Data
        do { data = try read(from: origin) } catch {
            guard let copy = latestPackageCopy, let fromCopy = try? read(from: copy) else { throw error }
            data = fromCopy
        }
        cache.withLock { $0 = data }
        return data
    }

    /// Calls `body` with the contents in pieces of at most `chunkSize` bytes, in order, without
    /// keeping them: for hashing a large file without holding it in memory. Contents read already
    /// are passed whole. If the file is gone, the newest copy a save made is read instead.
    ///
    /// - Throws: `changedSinceRead` if the file is not the one that was read, before or after
    ///   the pieces were passed (a change in place while they were read): the caller must then
    ///   drop what it made of them.
    package func forEachChunk(
        chunkSize: Int = LazyFileContents.chunkSize, _ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void
    ) throws(DocumentKitError) {
        if let data = loaded {
            var failure: DocumentKitError?
            data.withUnsafeBytes { bytes in
                do throws(DocumentKitError) { try body(bytes) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        let file = try openCurrent()
        defer { Glibc.close(file.fd) }
        // Small files get a small buffer: one byte more than the size, so the second read sees the end.
        let bufferSize = max(4096, min(chunkSize, Int(clamping: file.status.size) + 1))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count: Int
            do { count = try fileSystem.read(file.fd, into: buffer, at: offset, name: file.path) } catch {
                throw DocumentKitError(error, operation: .read, path: file.path, step: "reading its contents")
            }
            if count == 0 { break }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
        }
        try checkUnchanged(file, readBytes: offset)
    }

    /// Copies the contents into the open file `destination` (at `destinationPath`, through
    /// `writer`) in pieces, never holding more than one piece: a large file costs no memory.
    /// Contents read already are written from memory.
    ///
    /// - Throws: `changedSinceRead` if the file is not the one that was read, before or after
    ///   the copy (it was changed in place meanwhile): the copy may be torn, and the caller must
    ///   not use it. The system's error reading or writing otherwise.
    package func copy(to destination: CInt, destinationPath: String, using writer: FileSystem) throws(DocumentKitError) {
        if let data = loaded {
            do throws(Errno) { try writer.write(destination, data, name: destinationPath) } catch {
                throw DocumentKitError(error, operation: .save, path: destinationPath, step: "writing it")
            }
            return
        }
        try forEachChunk { (bytes) throws(DocumentKitError) in
            do throws(Errno) { try writer.write(destination, bytes, name: destinationPath) } catch {
                throw DocumentKitError(error, operation: .save, path: destinationPath, step: "writing it")
            }
        }
    }

    /// Opens the file (or, if it is gone, the newest copy a save made).
    private func openCurrent() throws(DocumentKitError) -> OpenedFile {
        do { return try open(origin) } catch {
            guard let copy = latestPackageCopy, let fromCopy = try? open(copy) else { throw error }
            return fromCopy
        }
    }

    /// Checks, after reading `file` to its end, that nothing changed it meanwhile: the same
    /// size, modification and change time (a write in place changes the change time, which no
    /// program can set back) and the bytes read were all of it.
    private func checkUnchanged(_ file: OpenedFile, readBytes: Int64) throws(DocumentKitError) {
        let after: FileStatus
        do { after = try fileSystem.status(of: file.fd, name: file.path) } catch {
            throw DocumentKitError(error, operation: .read, path: file.path, step: "reading its status again")
        }
        guard after.identity.isUnchanged(comparedTo: file.status.identity), readBytes == after.size else {
            throw DocumentKitError(
                .changedSinceRead, operation: .read, path: file.path,
                detail: "The file changed on disk while it was read (was \(file.status.identity), now \(after.identity)).")
        }
    }

    private struct OpenedFile {
        let fd: CInt
        let status: FileStatus
        let path: String
    }

    /// Opens the file at `origin` and checks that it is still the file that was read.
    /// The caller closes the descriptor.
    private func open(_ origin: FileOrigin) throws(DocumentKitError) -> OpenedFile {
        let path = origin.displayPath
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .read, path: path, step: step)
        }
        // The folder is opened once per tree (kept by its root), not once per member.
        let fd: CInt
        do {
            fd = try origin.withParentDirectory(using: fileSystem) { directory throws(Errno) in
                try fileSystem.open(origin.name, in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            }
        } catch { throw fail(error, "opening it") }
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch {
            Glibc.close(fd)
            throw fail(error, "reading its status")
        }
        guard status.kind == .regular, status.identity.isUnchanged(comparedTo: origin.identity) else {
            Glibc.close(fd)
            throw DocumentKitError(
                .changedSinceRead, operation: .read, path: path,
                detail: "The file changed on disk after the document was read (was \(origin.identity), now \(status.identity)).")
        }
        return OpenedFile(fd: fd, status: status, path: path)
    }

    private func read(from origin: FileOrigin) throws(DocumentKitError) -> Data {
        let file = try open(origin)
        defer { Glibc.close(file.fd) }
        if mapped, file.status.size >= 64 * 1024 {
            if let data = map(file.fd, size: Int(file.status.size)) { return data }
        }
        do { return try readAll(file.fd, size: Int(file.status.size), name: file.path, using: fileSystem) } catch {
            throw DocumentKitError(error, operation: .read, path: file.path, step: "reading its contents")
        }
    }

    private func map(_ fd: CInt, size: Int) -> Data? {
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else { return nil }
        return Data(bytesNoCopy: address, count: size, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }
}

