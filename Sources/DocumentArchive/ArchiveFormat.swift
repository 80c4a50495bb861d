import CArchive

/// A kind of archive DocumentKit exports to and imports from.
///
/// Zip and gzip-compressed tar are always available; tar with zstd or xz only where the
/// installed libarchive was built with them (``isAvailable``).
public enum ArchiveFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A zip archive, members compressed with DEFLATE (`.zip`).
    case zip
    /// A POSIX (pax) tar archive compressed with gzip (`.tar.gz`, `.tgz`).
    case tarGzip = "tar.gz"
    /// A POSIX tar archive compressed with Zstandard (`.tar.zst`).
    case tarZstd = "tar.zst"
    /// A POSIX tar archive compressed with xz (`.tar.xz`).
    case tarXz = "tar.xz"

    /// The usual file name extension: "zip", "tar.gz"...
    public var fileExtension: String { rawValue }

    public var description: String { rawValue }

    /// The format a file name's extension names, or nil: `notes.zip` is zip, `notes.tgz` and
    /// `notes.tar.gz` are tar.gz (letter case ignored).
    public init?(fileName: String) {
        let lowered = fileName.lowercased()
        if lowered.hasSuffix(".zip") {
            self = .zip
        } else if lowered.hasSuffix(".tar.gz") || lowered.hasSuffix(".tgz") {
            self = .tarGzip
        } else if lowered.hasSuffix(".tar.zst") || lowered.hasSuffix(".tzst") {
            self = .tarZstd
        } else if lowered.hasSuffix(".tar.xz") || lowered.hasSuffix(".txz") {
            self = .tarXz
        } else {
            return nil
        }
    }

    /// Whether this process's libarchive can write the format itself (not through an external
    /// program).
    public var isAvailable: Bool {
        guard let archive = archive_write_new() else { return false }
        defer { archive_write_free(archive) }
        return (try? configure(archive, deterministic: false)) != nil
    }

    /// The formats ``isAvailable`` says this process can write.
    public static var available: [ArchiveFormat] { allCases.filter(\.isAvailable) }

    /// Sets the format and compression of a new write archive; throws the libarchive message.
    func configure(_ archive: OpaquePointer, deterministic: Bool) throws(LibArchiveMessage) {
        func check(_ status: CInt) throws(LibArchiveMessage) {
            guard status == ARCHIVE_OK else { throw LibArchiveMessage(archive) }
        }
        switch self {
        case .zip:
            try check(archive_write_set_format_zip(archive))
            try check(archive_write_zip_set_compression_deflate(archive))
        case .tarGzip, .tarZstd, .tarXz:
            try check(archive_write_set_format_pax_restricted(archive))
            switch self {
            case .tarGzip:
                try check(archive_write_add_filter_gzip(archive))
                // gzip's header holds a time stamp unless told not to.
                if deterministic { try check(archive_write_set_filter_option(archive, "gzip", "timestamp", nil)) }
            case .tarZstd: try check(archive_write_add_filter_zstd(archive))
            default: try check(archive_write_add_filter_xz(archive))
            }
        }
        // No padding after the last block: a zip ends with its central directory, and zeros
        // after a zstd or xz stream are not a valid frame.
        try check(archive_write_set_bytes_in_last_block(archive, 1))
    }
}

/// libarchive's message for the last failure of an archive object.
struct LibArchiveMessage: Error, CustomStringConvertible {
    let description: String

    init(_ archive: OpaquePointer) {
        if let text = archive_error_string(archive) {
            description = String(cString: text)
        } else {
            description = "libarchive failed (error \(archive_errno(archive)))"
        }
    }

    init(_ text: String) { description = text }
}
