#if canImport(Glibc)
import Glibc
#endif
import CArchive
import DocumentKitSystem
import SystemPackage

/// A libarchive read object over an open archive file, read through the ``FileSystem`` seam:
/// zip (through its central directory) and tar, plain or compressed with gzip, bzip2, xz or
/// zstd; never an external program.
final class ArchiveReader {
    /// What the C callbacks need: the descriptor, the seam, the position and the first failure.
    final class Source {
        let fd: CInt
        let name: String
        let size: Int64
        let fileSystem: FileSystem
        var offset: Int64 = 0
        var failure: Errno?
        /// What made the gzip stream unreadable, if it did.
        var damage: String?
        /// The gzip stream the bytes come from, decompressed here (nil: the file's bytes as they are).
        var gzip: GzipSource?
        /// Bytes of the file handed to libarchive so far (counting a byte read twice twice; for
        /// gzip, the compressed bytes read).
        var consumedBytes: Int64 = 0
        var consumed: Int64 { gzip?.consumed ?? consumedBytes }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

        init(fd: CInt, name: String, size: Int64, fileSystem: FileSystem) {
            self.fd = fd
            self.name = name
            self.size = size
            self.fileSystem = fileSystem
        }

        deinit { buffer.deallocate() }
    }

    private let archive: OpaquePointer
    let source: Source
    private var entry: OpaquePointer?

    /// Opens a reader; `isZip` (the file starts like a zip) reads it as a zip through its
    /// central directory (with seeks), anything else as a stream of tar (decompressed).
    init(fd: CInt, name: String, size: Int64, isZip: Bool, fileSystem: FileSystem) throws(ArchiveFailure) {
        guard let archive = archive_read_new() else { throw ArchiveFailure.message("libarchive could not make a read object") }
        self.archive = archive
        source = Source(fd: fd, name: name, size: size, fileSystem: fileSystem)
        if !isZip, GzipSource.looksLikeGzip(fd, path: name, fileSystem: fileSystem) {
            do { source.gzip = try GzipSource(fd: fd, path: name, size: size, fileSystem: fileSystem) } catch {
                throw Self.failure(error)
            }
        }
        // Built-in decompressors only (a filter that needs an external program answers ARCHIVE_WARN).
        if isZip {
            try check(archive_read_support_format_zip_seekable(archive))
        } else {
            _ = archive_read_support_filter_gzip(archive)
            _ = archive_read_support_filter_bzip2(archive)
            _ = archive_read_support_filter_xz(archive)
            _ = archive_read_support_filter_zstd(archive)
            try check(archive_read_support_format_tar(archive))
        }
        let context = Unmanaged.passUnretained(source).toOpaque()
        try check(archive_read_set_callback_data(archive, context))
        try check(archive_read_set_read_callback(archive) { _, context, buffer in
            let source = Unmanaged<ArchiveReader.Source>.fromOpaque(context!).takeUnretainedValue()
            if let gzip = source.gzip {
                do throws(GzipSource.Failure) {
                    let count = try gzip.read(into: source.buffer)
                    buffer?.pointee = UnsafeRawPointer(source.buffer.baseAddress)
                    return count
                } catch {
                    switch error {
                    case .system(let errno): source.failure = errno
                    case .damaged(let text): source.damage = text
                    }
                    return -1
                }
            }
            do throws(Errno) {
                let count = try source.fileSystem.read(source.fd, into: source.buffer, at: source.offset, name: source.name)
                source.offset += Int64(count)
                source.consumedBytes += Int64(count)
                buffer?.pointee = UnsafeRawPointer(source.buffer.baseAddress)
                return count
            } catch {
                source.failure = error
                return -1
            }
        })
        // Only a zip is read with seeks (a compressed tar is one stream; libarchive's zstd reader
        // fails when it may seek).
        if isZip { try check(archive_read_set_seek_callback(archive) { _, context, offset, whence in
            let source = Unmanaged<ArchiveReader.Source>.fromOpaque(context!).takeUnretainedValue()
            let base: Int64
            switch whence {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = source.offset
            case SEEK_END: base = source.size
            default: return Int64(ARCHIVE_FATAL)
            }
            let position = base + offset
            guard position >= 0 else { return Int64(ARCHIVE_FATAL) }
            source.offset = position
            return position
        }) }
        try check(archive_read_open1(archive))
    }

    deinit { archive_read_free(archive) }

    /// The system error of the file, else the gzip stream's damage, else libarchive's message.
    private func failure() -> ArchiveFailure {
        if let errno = source.failure { return .system(errno) }
        if let damage = source.damage { return .message(damage) }
        return .message(LibArchiveMessage(archive).description)
    }

    private static func failure(_ error: GzipSource.Failure) -> ArchiveFailure {
        switch error {
        case .system(let errno): .system(errno)
        case .damaged(let text): .message(text)
        }
    }

    /// After the last entry: reads the rest of a gzip stream, so that its CRC-32 and length are
    /// checked (libarchive stops at the tar's end marker).
    func finish(limit: Int64) throws(ArchiveFailure) {
        guard let gzip = source.gzip else { return }
        do { try gzip.drain(limit: limit) } catch { throw Self.failure(error) }
    }

    private func check(_ status: CInt) throws(ArchiveFailure) {
        guard status < ARCHIVE_WARN else { return }
        throw failure()
    }

    /// The next entry's header, or nil at the end of the archive.
    func nextEntry() throws(ArchiveFailure) -> ArchiveEntryHeader? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(archive, &entry)
        if status == ARCHIVE_EOF { return nil }
        // ARCHIVE_WARN: a header libarchive could read with a complaint (an unknown pax key...).
        guard status >= ARCHIVE_WARN, let entry else { throw failure() }
        self.entry = entry
        return ArchiveEntryHeader(entry)
    }

    /// The next block of the current entry's data and its offset in the entry, or nil at its end.
    func nextBlock() throws(ArchiveFailure) -> (bytes: UnsafeRawBufferPointer, offset: Int64)? {
        var buffer: UnsafeRawPointer?
        var size = 0
        var offset: Int64 = 0
        let status = archive_read_data_block(archive, &buffer, &size, &offset)
        if status == ARCHIVE_EOF { return nil }
        // A warning about data is damage (a zip member whose CRC-32 or size is not its header's).
        guard status == ARCHIVE_OK else { throw failure() }
        return (UnsafeRawBufferPointer(start: buffer, count: size), offset)
    }

    /// The name of the archive's format as libarchive detected it ("ZIP 2.0 (deflation)", "POSIX pax interchange format"...).
    var formatName: String { archive_format_name(archive).map { String(cString: $0) } ?? "unknown" }
}

/// What an entry's header says.
struct ArchiveEntryHeader {
    /// The name, if it is valid UTF-8; the raw bytes otherwise.
    var path: String?
    var rawPath: [UInt8]
    var fileType: UInt32
    var permissions: UInt32
    var size: Int64?
    var symbolicLinkTarget: String?
    var hardLinkTarget: String?
    /// Whether the entry has holes (a sparse file): its data blocks leave them out, the last
    /// one possibly at the end.
    var isSparse: Bool
    /// The modification time in nanoseconds since 1970, if the entry has one that fits.
    var modificationTime: Int64?

    init(_ entry: OpaquePointer) {
        if let raw = archive_entry_pathname(entry) {
            rawPath = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
        } else {
            rawPath = []
        }
        if let utf8 = archive_entry_pathname_utf8(entry) {
            path = String(validatingCString: utf8)
        } else {
            path = String(validating: rawPath, as: UTF8.self)
        }
        fileType = UInt32(archive_entry_filetype(entry))
        permissions = UInt32(archive_entry_perm(entry))
        size = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        symbolicLinkTarget = (archive_entry_symlink_utf8(entry) ?? archive_entry_symlink(entry)).flatMap { String(validatingCString: $0) }
        hardLinkTarget = (archive_entry_hardlink_utf8(entry) ?? archive_entry_hardlink(entry)).flatMap { String(validatingCString: $0) }
        isSparse = archive_entry_sparse_count(entry) > 0
        if archive_entry_mtime_is_set(entry) != 0 {
            // A hostile header can hold any 64-bit value: only times that fit in nanoseconds count.
            let (nanoseconds, overflow) = Int64(archive_entry_mtime(entry)).multipliedReportingOverflow(by: 1_000_000_000)
            let fraction = Int64(archive_entry_mtime_nsec(entry))
            if !overflow, (0..<1_000_000_000).contains(fraction), nanoseconds <= Int64.max - fraction {
                modificationTime = nanoseconds + fraction
            }
        }
    }
}
