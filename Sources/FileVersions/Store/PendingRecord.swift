#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Synchronization
import SystemPackage

/// A version's record written to its temporary file in a new entry (``VersionStore/beginRecord(_:inNewEntry:)``),
/// its writeback started, neither flushed nor named yet. A save that exchanges the replaced
/// package into the entry finishes it just before the exchange (``/FilePackages/SaveOptions/beforeExchange``),
/// so that the record's disk write overlaps the new package's. Closed, unnamed, when dropped unfinished.
final class PendingRecord: Sendable {
    /// The entry's folder, open.
    let folder: Descriptor
    /// The record's path once named (for messages).
    let path: String
    private let temporary: String
    /// Whether the record is flushed before it is named (a store that flushes each item).
    let flushes: Bool
    private let fileSystem: FileSystem
    private let file: Mutex<CInt?>

    init(file: CInt, temporary: String, in folder: Descriptor, path: String, flushes: Bool, fileSystem: FileSystem) {
        self.file = Mutex(file)
        self.temporary = temporary
        self.folder = folder
        self.path = path
        self.flushes = flushes
        self.fileSystem = fileSystem
    }

    deinit {
        if let fd = file.withLock({ $0 }) { Glibc.close(fd) }
    }

    /// The record's open file, for a caller that flushes it with others (then ``finish(flushed:syncingFileSystemFirst:)``
    /// with `flushed`); nil once finished.
    var flushItem: FileSystem.FlushItem? {
        file.withLock { $0 }.map { FileSystem.FlushItem(fd: $0, name: path, isDirectory: false) }
    }

    /// Flushes the record (a store that flushes each item, unless `flushed` already), closes it
    /// and names it `record.json`; with `syncingFileSystemFirst` (a batched store), one `syncfs`
    /// before the name. Its name is flushed with the entry's folder, by the caller.
    func finish(flushed: Bool = false, syncingFileSystemFirst: Bool = false) throws(DocumentKitError) {
        do throws(Errno) {
            guard let fd = file.withLock({ file in defer { file = nil }; return file }) else { return }
            do throws(Errno) {
                if flushes && !flushed { try fileSystem.synchronize(fd, name: path) }
            } catch {
                try? fileSystem.close(fd, name: path)
                throw error
            }
            try fileSystem.close(fd, name: path)
            if syncingFileSystemFirst { try fileSystem.synchronizeFileSystem(folder.rawValue, name: path) }
            try fileSystem.rename(temporary, in: folder.rawValue, to: VersionRecord.fileName, in: folder.rawValue)
        } catch {
            throw DocumentKitError(error, operation: .save, path: path, step: "writing the new version's record", originalIsIntact: true)
        }
    }
}
