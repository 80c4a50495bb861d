import DocumentKitSystem
import FilePackages

/// Writes a package tree as a zip stream, in one pass (no seeking back): members read from a
/// zip are copied as stored there (compressed bytes, CRC-32 and sizes), the others compressed
/// with DEFLATE and followed by a data descriptor. Entries in byte order of their paths, folders
/// first as `NAME/`, every time 1980-01-01 00:00: the same tree gives the same bytes.
struct ZipWriter {
    let path: String
    let output: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void
    private var offset: Int64 = 0
    private var records: [Record] = []

    private struct Record {
        var name: [UInt8]
        var flags: UInt16
        var method: UInt16
        var crc: UInt32
        var compressed: Int64
        var uncompressed: Int64
        var localOffset: Int64
        var external: UInt32
    }

    /// UTF-8 names (bit 11); sizes in a data descriptor after the data (bit 3).
    private static let utf8Flag: UInt16 = 0x0800
    private static let descriptorFlag: UInt16 = 0x0008
    /// 1980-01-01 00:00 in MS-DOS form.
    private static let dosTime: UInt16 = 0
    private static let dosDate: UInt16 = (0 << 9) | (1 << 5) | 1

    init(path: String, output: @escaping (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void) {
        self.path = path
        self.output = output
    }

    private func tooLarge(_ what: String) -> DocumentKitError {
        DocumentKitError(
            .invalidArgument, operation: .save, path: path, originalIsIntact: true,
            detail: "\(what) is over the zip limits of this version (4 GiB per member and in all, 65,535 members): "
                + "single-file documents are written without zip64.")
    }

    private mutating func emit(_ bytes: UnsafeRawBufferPointer) throws(DocumentKitError) {
        try output(bytes)
        offset += Int64(bytes.count)
    }

    private mutating func emit(_ bytes: [UInt8]) throws(DocumentKitError) {
        var failure: DocumentKitError?
        let output = self.output
        bytes.withUnsafeBytes { raw in
            do throws(DocumentKitError) { try output(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        offset += Int64(bytes.count)
    }

    private static func append16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value & 0xFF))
        bytes.append(UInt8(value >> 8))
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        append16(UInt16(value & 0xFFFF), to: &bytes)
        append16(UInt16(value >> 16), to: &bytes)
    }

    private func localHeader(_ record: Record) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30 + record.name.count)
        Self.append32(0x0403_4B50, to: &bytes)
        Self.append16(20, to: &bytes)
        Self.append16(record.flags, to: &bytes)
        Self.append16(record.method, to: &bytes)
        Self.append16(Self.dosTime, to: &bytes)
        Self.append16(Self.dosDate, to: &bytes)
        let deferred = record.flags & Self.descriptorFlag != 0
        Self.append32(deferred ? 0 : record.crc, to: &bytes)
        Self.append32(deferred ? 0 : UInt32(record.compressed), to: &bytes)
        Self.append32(deferred ? 0 : UInt32(record.uncompressed), to: &bytes)
        Self.append16(UInt16(record.name.count), to: &bytes)
        Self.append16(0, to: &bytes)
        bytes.append(contentsOf: record.name)
        return bytes
    }

    /// Writes `package` (a folder) as a whole zip archive.
    mutating func write(_ package: FileWrapper) throws(DocumentKitError) {
        guard let children = package.fileWrappers else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: path, originalIsIntact: true,
                detail: "A single-file document's tree must be a folder of members; this is a \(package.kind).")
        }
        try writeChildren(children, prefix: "")
        try finish()
    }

    private mutating func writeChildren(_ children: [String: FileWrapper], prefix: String) throws(DocumentKitError) {
        for name in children.keys.sorted(by: { UTF8Order.compare($0, $1) < 0 }) {
            guard let child = children[name] else { continue }
            let path = prefix + name
            switch child.kind {
            case .directory:
                try writeEntry(Array((path + "/").utf8), method: 0, mode: 0o040000 | (child.permissions ?? 0o755), stored: nil)
                try writeChildren(child.fileWrappers ?? [:], prefix: path + "/")
            case .symbolicLink:
                let target = Array((child.symbolicLinkDestination ?? "").utf8)
                try writeEntry(Array(path.utf8), method: 0, mode: 0o120777, stored: target)
            case .regularFile:
                try writeFile(child, path: path)
            }
        }
    }

    /// A folder or link: stored bytes known in full.
    private mutating func writeEntry(_ name: [UInt8], method: UInt16, mode: UInt32, stored: [UInt8]?) throws(DocumentKitError) {
        let data = stored ?? []
        var crc = ZipCRC()
        data.withUnsafeBytes { crc.update($0) }
        let record = Record(
            name: name, flags: Self.utf8Flag, method: method, crc: crc.value, compressed: Int64(data.count),
            uncompressed: Int64(data.count), localOffset: offset, external: mode << 16 | (mode & 0o040000 != 0 ? 0x10 : 0))
        try checkOffset()
        try emit(localHeader(record))
        try emit(data)
        records.append(record)
    }

    private func checkOffset() throws(DocumentKitError) {
        if offset > 0xFFFF_FFFF { throw tooLarge("The archive") }
        if records.count >= 0xFFFF { throw tooLarge("The number of members") }
    }

    private mutating func writeFile(_ file: FileWrapper, path: String) throws(DocumentKitError) {
        let mode = 0o100000 | (file.permissions ?? 0o644)
        try checkOffset()
        if let origin = file.providedContents?.context as? ZipMemberOrigin {
            // Read from a zip and not changed since: its stored bytes are copied as they are.
            let entry = origin.entry
            let record = Record(
                name: Array(path.utf8), flags: Self.utf8Flag, method: UInt16(entry.method), crc: entry.crc32,
                compressed: entry.compressedSize, uncompressed: entry.uncompressedSize, localOffset: offset, external: mode << 16)
            try emit(localHeader(record))
            try origin.source.forEachStoredChunk(of: entry) { (bytes) throws(DocumentKitError) in try emit(bytes) }
            records.append(record)
            return
        }
        var record = Record(
            name: Array(path.utf8), flags: Self.utf8Flag | Self.descriptorFlag, method: 8, crc: 0, compressed: 0, uncompressed: 0,
            localOffset: offset, external: mode << 16)
        try emit(localHeader(record))
        let stream: DeflateStream
        do { stream = try DeflateStream(.compress) } catch {
            throw DocumentKitError(.other, operation: .save, path: path, detail: error.message)
        }
        var crc = ZipCRC()
        var uncompressed: Int64 = 0
        let start = offset
        var failure: DocumentKitError?
        do throws(DocumentKitError) {
            try file.forEachContentChunk { bytes in
                guard failure == nil else { return }
                crc.update(bytes)
                uncompressed += Int64(bytes.count)
                do throws(DocumentKitError) {
                    try stream.process(bytes, finish: false) { (out) throws(DocumentKitError) in try emit(out) }
                } catch { failure = error }
            }
        } catch {
            var error = error
            error.operation = .save
            error.path = self.path
            error.step = "reading the member “\(path)”"
            error.originalIsIntact = true
            throw error
        }
        if let failure { throw failure }
        try stream.process(UnsafeRawBufferPointer(start: nil, count: 0), finish: true) { (out) throws(DocumentKitError) in try emit(out) }
        record.crc = crc.value
        record.compressed = offset - start
        record.uncompressed = uncompressed
        if record.compressed > 0xFFFF_FFFF || uncompressed > 0xFFFF_FFFF { throw tooLarge("The member “\(path)”") }
        var descriptor: [UInt8] = []
        Self.append32(0x0807_4B50, to: &descriptor)
        Self.append32(record.crc, to: &descriptor)
        Self.append32(UInt32(record.compressed), to: &descriptor)
        Self.append32(UInt32(uncompressed), to: &descriptor)
        try emit(descriptor)
        records.append(record)
    }

    /// The central directory and its end record.
    private mutating func finish() throws(DocumentKitError) {
        let directoryOffset = offset
        for record in records {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(46 + record.name.count)
            Self.append32(0x0201_4B50, to: &bytes)
            Self.append16(3 << 8 | 20, to: &bytes)  // made by Unix, zip 2.0
            Self.append16(20, to: &bytes)
            Self.append16(record.flags, to: &bytes)
            Self.append16(record.method, to: &bytes)
            Self.append16(Self.dosTime, to: &bytes)
            Self.append16(Self.dosDate, to: &bytes)
            Self.append32(record.crc, to: &bytes)
            Self.append32(UInt32(record.compressed), to: &bytes)
            Self.append32(UInt32(record.uncompressed), to: &bytes)
            Self.append16(UInt16(record.name.count), to: &bytes)
            Self.append16(0, to: &bytes)  // extra
            Self.append16(0, to: &bytes)  // comment
            Self.append16(0, to: &bytes)  // disk
            Self.append16(0, to: &bytes)  // internal attributes
            Self.append32(record.external, to: &bytes)
            Self.append32(UInt32(record.localOffset), to: &bytes)
            bytes.append(contentsOf: record.name)
            try emit(bytes)
        }
        let size = offset - directoryOffset
        if offset > 0xFFFF_FFFF { throw tooLarge("The archive") }
        var end: [UInt8] = []
        Self.append32(0x0605_4B50, to: &end)
        Self.append16(0, to: &end)
        Self.append16(0, to: &end)
        Self.append16(UInt16(records.count), to: &end)
        Self.append16(UInt16(records.count), to: &end)
        Self.append32(UInt32(size), to: &end)
        Self.append32(UInt32(directoryOffset), to: &end)
        Self.append16(0, to: &end)
        try emit(end)
    }
}
