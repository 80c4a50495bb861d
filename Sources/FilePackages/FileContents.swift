#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation
import Synchronization

/// The bytes of a regular file on disk, read when first asked for and then kept.
package final class LazyFileContents: Sendable {
    package let origin: FileOrigin
    private let mapped: Bool
    private let cache = Mutex<Data?>(nil)

    package init(origin: FileOrigin, mapped: Bool, preloaded: Data? = nil) {
        self.origin = origin
        self.mapped = mapped
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

    private func read(from origin: FileOrigin) throws(DocumentKitError) -> Data {
        let fileSystem = FileSystem.live
        let path = origin.displayPath
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .read, path: path, step: step)
        }
        let directory: CInt
        do { directory = try origin.openParentDirectory(using: fileSystem) } catch {
            throw fail(error, "opening the folder that holds it")
        }
        defer { Glibc.close(directory) }
        let fd: CInt
        do {
            fd = try fileSystem.open(
                origin.components.last!, in: directory, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        } catch { throw fail(error, "opening it") }
        defer { Glibc.close(fd) }
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch { throw fail(error, "reading its status") }
        guard status.kind == .regular, status.identity.isUnchanged(comparedTo: origin.identity) else {
            throw DocumentKitError(
                .changedSinceRead, operation: .read, path: path,
                detail: "The file changed on disk after the document was read (was \(origin.identity), now \(status.identity)).")
        }
        if mapped, status.size >= 64 * 1024 {
            if let data = map(fd, size: Int(status.size)) { return data }
        }
        do { return try readAll(fd, size: Int(status.size), name: path, using: fileSystem) } catch {
            throw fail(error, "reading its contents")
        }
    }

    private func map(_ fd: CInt, size: Int) -> Data? {
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else { return nil }
        return Data(bytesNoCopy: address, count: size, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }
}

