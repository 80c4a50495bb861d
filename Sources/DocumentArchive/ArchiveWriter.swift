#if canImport(Glibc)
import Glibc
#endif
import CArchive
import DocumentKitSystem
import SystemPackage

/// A libarchive write object that writes to an open file descriptor through the ``FileSystem``
/// seam, entry by entry.
final class ArchiveWriter {
    /// What the C write callback needs: the descriptor, the seam, and the first failure.
    final class Target {
        let fd: CInt
        let name: String
        let fileSystem: FileSystem
        var failure: Errno?
        var written: Int64 = 0

        init(fd: CInt, name: String, fileSystem: FileSystem) {
            self.fd = fd
            self.name = name
            self.fileSystem = fileSystem
        }
    }

    private let archive: OpaquePointer
    private let target: Target
    private var isOpen = false

    /// Bytes written to the file so far.
    var bytesWritten: Int64 { target.written }

    init(fd: CInt, name: String, format: ArchiveFormat, deterministic: Bool, fileSystem: FileSystem) throws(ArchiveFailure) {
        guard let archive = archive_write_new() else { throw ArchiveFailure.message("libarchive could not make a write object") }
        self.archive = archive
        target = Target(fd: fd, name: name, fileSystem: fileSystem)
        do { try format.configure(archive, deterministic: deterministic) } catch {
            throw ArchiveFailure.message("the format \(format) is not available here: \(error)")
        }
        let status = archive_write_open2(
            archive, Unmanaged.passUnretained(target).toOpaque(), nil,
            { _, context, buffer, length in
                let target = Unmanaged<ArchiveWriter.Target>.fromOpaque(context!).takeUnretainedValue()
                guard let buffer else { return 0 }
                do throws(Errno) {
                    try target.fileSystem.write(target.fd, UnsafeRawBufferPointer(start: buffer, count: length), name: target.name)
                } catch {
                    target.failure = error
                    return -1
                }
                target.written += Int64(length)
                return length
            }, nil, nil)
        try check(status)
        isOpen = true
    }

    deinit { archive_write_free(archive) }

    /// Throws the first failure: the file's system error, else libarchive's message.
    private func check(_ status: CInt) throws(ArchiveFailure) {
        guard status < ARCHIVE_WARN else { return }
        if let errno = target.failure { throw ArchiveFailure.system(errno) }
        throw ArchiveFailure.message(LibArchiveMessage(archive).description)
    }

    /// Writes an entry's header: `kind` 'f' file, 'd' folder, 'l' symbolic link.
    func writeHeader(path: String, kind: EntryKind, size: Int64, permissions: UInt32, modificationTime: Int64, linkTarget: String? = nil)
        throws(ArchiveFailure)
    {
        guard let entry = archive_entry_new() else { throw ArchiveFailure.message("libarchive could not make an entry") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, path)
        archive_entry_set_filetype(entry, kind.fileType)
        archive_entry_set_perm(entry, mode_t(permissions & 0o777))
        archive_entry_set_mtime(entry, time_t(modificationTime / 1_000_000_000), Int(modificationTime % 1_000_000_000))
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        if kind == .file { archive_entry_set_size(entry, size) }
        if let linkTarget { archive_entry_set_symlink_utf8(entry, linkTarget) }
        try check(archive_write_header(archive, entry))
    }

    /// Writes the next bytes of the current file entry.
    func writeData(_ bytes: UnsafeRawBufferPointer) throws(ArchiveFailure) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let written = archive_write_data(archive, base, bytes.count)
        if written < 0 { try check(CInt(ARCHIVE_FATAL)) }
        if written != bytes.count { throw ArchiveFailure.message("libarchive wrote \(written) of \(bytes.count) bytes") }
    }

    /// Finishes the archive: the last entry's padding, the zip central directory, the
    /// compressor's trailer.
    func finish() throws(ArchiveFailure) {
        guard isOpen else { return }
        isOpen = false
        try check(archive_write_close(archive))
    }
}

/// The kinds of entries DocumentKit writes and extracts.
enum EntryKind: Sendable {
    case file, folder, symbolicLink

    var fileType: UInt32 {
        switch self {
        case .file: 0o100000
        case .folder: 0o040000
        case .symbolicLink: 0o120000
        }
    }
}

/// A failure inside an archive operation, before it is given a path and a step.
enum ArchiveFailure: Error {
    case system(Errno)
    case message(String)
}
