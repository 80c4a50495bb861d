/// The limits an import enforces while it extracts, counting what is actually written (headers
/// can lie): they stop decompression bombs and archives that would fill the disk.
///
/// Every limit is checked as the bytes are written, so at most one chunk past a limit reaches
/// the disk before the import stops and removes everything it wrote.
public struct ArchiveLimits: Sendable, Hashable {
    /// The most bytes all entries together may expand to. Default 64 GiB.
    public var maximumTotalBytes: Int64
    /// The most bytes one entry may expand to. Default 16 GiB.
    public var maximumEntryBytes: Int64
    /// The most entries (files, folders and links). Default 1,000,000.
    public var maximumEntryCount: Int
    /// The most bytes written per byte of archive read, once ``compressionRatioGrace`` bytes
    /// have been written. DEFLATE cannot exceed about 1,032:1 without overlapping entries;
    /// documents rarely pass 20:1. Default 200.
    public var maximumCompressionRatio: Double
    /// How many bytes may be written before the ratio applies (small, highly compressible
    /// files are normal). Default 16 MiB.
    public var compressionRatioGrace: Int64
    /// The most folders an entry's path may go down. Default 64.
    public var maximumDepth: Int
    /// The longest path of an entry, in UTF-8 bytes. Default 1,024.
    public var maximumPathBytes: Int

    /// Limits for documents and libraries of documents.
    public init(
        maximumTotalBytes: Int64 = 64 << 30, maximumEntryBytes: Int64 = 16 << 30, maximumEntryCount: Int = 1_000_000,
        maximumCompressionRatio: Double = 200, compressionRatioGrace: Int64 = 16 << 20, maximumDepth: Int = 64,
        maximumPathBytes: Int = 1_024
    ) {
        self.maximumTotalBytes = maximumTotalBytes
        self.maximumEntryBytes = maximumEntryBytes
        self.maximumEntryCount = maximumEntryCount
        self.maximumCompressionRatio = maximumCompressionRatio
        self.compressionRatioGrace = compressionRatioGrace
        self.maximumDepth = maximumDepth
        self.maximumPathBytes = maximumPathBytes
    }

    /// The default limits.
    public static let `default` = ArchiveLimits()
}
