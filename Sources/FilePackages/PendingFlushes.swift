#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem

/// The files a durable ``PackageBuilder`` wrote and has not flushed yet: each is open, its
/// writeback started; they are flushed (`fsync`) and closed together before any folder is, at
/// most ``limit`` held at a time in the whole tree (a package of many members, or nested deep,
/// holds few descriptors).
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

    /// Flushes and closes every file held.
    mutating func flushAll() throws(DocumentKitError) {
        while !files.isEmpty {
            let file = files.removeFirst()
            do { try fileSystem.synchronize(file.fd, name: file.memberPath) } catch {
                Glibc.close(file.fd)
                throw DocumentKitError(
                    error, operation: .save, path: documentPath, step: "writing the member “\(file.memberPath)”", originalIsIntact: true)
            }
            do { try fileSystem.close(file.fd, name: file.memberPath) } catch {
                throw DocumentKitError(
                    error, operation: .save, path: documentPath, step: "closing the member “\(file.memberPath)”", originalIsIntact: true)
            }
        }
    }

    /// Closes what is still held (a build that failed): nothing of it is kept.
    mutating func closeAll() {
        for file in files { Glibc.close(file.fd) }
        files = []
    }
}
