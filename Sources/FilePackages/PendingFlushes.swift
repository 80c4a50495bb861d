#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem

/// The files a durable ``PackageBuilder`` wrote and has not flushed yet: each is open, its
/// writeback started; they are flushed (`fsync`, all at once) and closed together, with the
/// folder whose build ended, at most ``limit`` held at a time in the whole tree (a package of
/// many members, or nested deep, holds few descriptors).
struct PendingFlushes {
    /// Files held open at most: when there are this many, all are flushed.
    static let limit = 16

    let fileSystem: FileSystem
    let documentPath: String
    private var files: [(fd: CInt, memberPath: String)] = []

    init(fileSystem: FileSystem, documentPath: String) {
        self.fileSystem = fileSystem
        self.documentPath = documentPath
    }

    /// Takes the open file `fd` (the member at `memberPath`), flushing those held when there are
    /// ``limit`` of them.
    mutating func add(_ fd: CInt, memberPath: String) throws(DocumentKitError) {
        files.append((fd, memberPath))
        if files.count >= Self.limit { try flushAll() }
    }

    /// Flushes and closes every file held, and flushes `extra` with them (a folder of the files,
    /// a caller's descriptors), all at once (``/DocumentKitSystem/FileSystem/synchronize(together:)``):
    /// nothing of it is reachable before the caller's rename or exchange, so their order does not
    /// matter. An item of `extra` that fails throws with its `step`.
    mutating func flushAll(with extra: [(item: FileSystem.FlushItem, step: String)] = []) throws(DocumentKitError) {
        let held = files
        files = []
        let items = held.map { FileSystem.FlushItem(fd: $0.fd, name: $0.memberPath, isDirectory: false) } + extra.map(\.item)
        guard !items.isEmpty else { return }
        let results = fileSystem.synchronize(together: items)
        var failure: DocumentKitError?
        for (index, file) in held.enumerated() {
            if failure == nil, let error = results[index] {
                failure = DocumentKitError(
                    error, operation: .save, path: documentPath, step: "writing the member “\(file.memberPath)”", originalIsIntact: true)
            }
            guard failure == nil else {
                Glibc.close(file.fd)
                continue
            }
            do { try fileSystem.close(file.fd, name: file.memberPath) } catch {
                failure = DocumentKitError(
                    error, operation: .save, path: documentPath, step: "closing the member “\(file.memberPath)”", originalIsIntact: true)
            }
        }
        if let failure { throw failure }
        for (offset, entry) in extra.enumerated() {
            if let error = results[held.count + offset] {
                throw DocumentKitError(error, operation: .save, path: documentPath, step: entry.step, originalIsIntact: true)
            }
        }
    }

    /// Closes what is still held (a build that failed): nothing of it is kept.
    mutating func closeAll() {
        for file in files { Glibc.close(file.fd) }
        files = []
    }
}
