#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import Logging
import SystemPackage

/// A file written by a stream of calls (an archive being exported, say) and put in place as a
/// save puts a file: a locked temporary file beside the destination, flushed, then swapped in
/// atomically. Until the swap nobody sees a byte of it; a failure, a cancellation or a crash
/// leaves the destination as it was (a crash's temporary file is swept by the next save there).
package enum StreamedFileSave {
    /// Writes the file at `url` through `body`, which gets the temporary file's descriptor and
    /// name, then swaps it in. An existing regular file at `url` is replaced; a folder is not.
    ///
    /// - Returns: The new file's status.
    package static func write(
        to url: URL, durability: Durability, mode: mode_t = 0o666, using fileSystem: FileSystem,
        _ body: (_ fd: CInt, _ temporaryName: String) throws(DocumentKitError) -> Void
    ) throws(DocumentKitError) -> FileStatus {
        let location = try ItemLocation.resolve(url, operation: .save, using: fileSystem)
        let parent = location.parent.rawValue
        let path = location.path
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: path, step: step, originalIsIntact: true)
        }
        var current: FileStatus?
        do { current = try fileSystem.status(of: location.name, in: parent) } catch {
            guard error == .noSuchFileOrDirectory else { throw fail(error, "reading the status of the item in the way") }
        }
        if let current, current.kind != .regular {
            throw DocumentKitError(
                .alreadyExists, operation: .save, path: path, originalIsIntact: true,
                detail: "A \(current.kind == .directory ? "folder" : "non-regular item") is in the way; only a file is replaced.")
        }
        let temporaryName: String
        let fd: CInt
        do {
            (temporaryName, fd) = try TemporaryItem.makeLockedFile(
                for: location.name, purpose: "tmp", in: parent, mode: mode, using: fileSystem)
        } catch { throw fail(error.errno, "\(error.step) the temporary file “\(error.name)”") }
        var swapped = false
        var closed = false
        defer {
            if !closed { Glibc.close(fd) }
            if !swapped { _ = try? fileSystem.unlink(temporaryName, in: parent) }
        }
        try body(fd, temporaryName)
        let durable = durability.isDurable
        if durable {
            do { try fileSystem.synchronize(fd, name: temporaryName) } catch {
                throw fail(error, "flushing the new file to disk (fsync)")
            }
        }
        let replacement = AtomicReplacement(
            fileSystem: fileSystem, parent: parent, parentPath: location.parentPath, name: location.name,
            documentPath: path, durable: durable)
        let outcome: AtomicReplacement.Outcome
        do { outcome = try replacement.swap(temporaryName, itemExists: current != nil, isDirectory: false) } catch {
            if error.originalIsIntact == false { swapped = true }
            throw error
        }
        swapped = true
        if case .oldItemAtTemporaryName = outcome { _ = try? fileSystem.unlink(temporaryName, in: parent) }
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch { throw fail(error, "reading the new file's status") }
        closed = true
        do { try fileSystem.close(fd, name: temporaryName) } catch {
            AtomicReplacement.logger.warning("Saved \(path); closing it reported \(error.readableDescription)")
        }
        return status
    }
}
