import DocumentKitSystem
import SystemPackage

/// Checks a zip file's central directory against its local headers before anything is
/// extracted: entries whose data overlap (the non-recursive "better zip bomb" makes every
/// entry expand one shared compressed kernel), local headers that disagree with the central
/// directory about the name, and entries that run past the end of the file are refused.
///
/// libarchive reads a zip through its central directory, which is what such bombs fool; the
/// written-bytes limits stop them too, but only after they have written something.
struct ZipLayoutCheck {
    let fd: CInt
    let name: String
    let size: Int64
    let fileSystem: FileSystem

    enum Problem: Error {
        case overlap(first: String, second: String)
        case mismatch(entry: String, detail: String)
        case damaged(String)
        case system(Errno)
    }

    private func bytes(at offset: Int64, count: Int) throws(Problem) -> [UInt8] {
        guard offset >= 0, count >= 0, Int64(count) <= size, offset <= size - Int64(count) else {
            throw .damaged("a record at offset \(offset) runs past the end of the file (\(size) bytes)")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 8)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let read: Int
            do {
                read = try fileSystem.read(
                    fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count]), at: offset + Int64(done), name: name)
            } catch { throw .system(error) }
            if read == 0 { throw .damaged("the file ended early") }
            done += read
        }
        return Array(buffer[..<count])
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ i: Int) -> Int64 { Int64(u16(b, i)) | Int64(u16(b, i + 2)) << 16 }
    private static func u64(_ b: [UInt8], _ i: Int) -> Int64 { u32(b, i) | u32(b, i + 4) << 32 }

    /// Whether the file starts like a zip (a local header or an empty archive's end record).
    func looksLikeZip() throws(Problem) -> Bool {
        guard size >= 4 else { return false }
        let head = try bytes(at: 0, count: 4)
        return head[0] == 0x50 && head[1] == 0x4B && ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))
    }

    /// One entry as the central directory and its local header describe it.
    struct Entry: Sendable {
        var name: String
        var nameBytes: [UInt8]
        var flags: Int
        var method: Int
        var crc32: UInt32
        var compressedSize: Int64
        var uncompressedSize: Int64
        var localHeaderOffset: Int64
        /// Where the entry's (compressed) data starts.
        var dataOffset: Int64
        /// The high 16 bits: the Unix mode, when the archive was made on Unix.
        var externalAttributes: UInt32
        var madeBy: Int
    }

    /// Runs the check; returns the entries the central directory lists, in its order.
    @discardableResult
    func run() throws(Problem) -> [Entry] {
        // The end-of-central-directory record: 22 bytes plus a comment of up to 65,535.
        let tailCount = Int(min(size, 22 + 65_535))
        let tail = try bytes(at: size - Int64(tailCount), count: tailCount)
        var end = -1
        var index = tailCount - 22
        while index >= 0 {
            if tail[index] == 0x50, tail[index + 1] == 0x4B, tail[index + 2] == 5, tail[index + 3] == 6 {
                end = index
                break
            }
            index -= 1
        }
        guard end >= 0 else { throw .damaged("no end-of-central-directory record") }
        let endOffset = size - Int64(tailCount) + Int64(end)
        var count = Int64(Self.u16(tail, end + 10))
        var directorySize = Self.u32(tail, end + 12)
        var directoryOffset = Self.u32(tail, end + 16)
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF {
            // Zip64: a locator just before the end record points at the zip64 end record.
            let locator = try bytes(at: endOffset - 20, count: 20)
            guard locator[0] == 0x50, locator[1] == 0x4B, locator[2] == 6, locator[3] == 7 else {
                throw .damaged("a zip64 archive without its locator")
            }
            let record = try bytes(at: Self.u64(locator, 8), count: 56)
            guard record[0] == 0x50, record[1] == 0x4B, record[2] == 6, record[3] == 6 else {
                throw .damaged("the zip64 end record is not where its locator says")
            }
            count = Self.u64(record, 32)
            directorySize = Self.u64(record, 40)
            directoryOffset = Self.u64(record, 48)
        }
        guard count >= 0, directorySize >= 0, directoryOffset >= 0, directorySize <= size, count <= directorySize / 46 + 1 else {
            throw .damaged("the central directory is larger than the file")
        }
        let directory = try bytes(at: directoryOffset, count: Int(directorySize))
        var ranges: [(start: Int64, end: Int64, name: String)] = []
        ranges.reserveCapacity(Int(count))
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        var position = 0
        for _ in 0..<count {
            guard position + 46 <= directory.count, Self.u32(directory, position) == 0x0201_4B50 else {
                throw .damaged("central directory record \(ranges.count + 1) is damaged")
            }
            let madeBy = Self.u16(directory, position + 4)
            let flags = Self.u16(directory, position + 8)
            let method = Self.u16(directory, position + 10)
            let crc = UInt32(Self.u32(directory, position + 16))
            let external = UInt32(Self.u32(directory, position + 38))
            var compressed = Self.u32(directory, position + 20)
            var uncompressed = Self.u32(directory, position + 24)
            let nameLength = Self.u16(directory, position + 28)
            let extraLength = Self.u16(directory, position + 30)
            let commentLength = Self.u16(directory, position + 32)
            var localOffset = Self.u32(directory, position + 42)
            let nameStart = position + 46
            let next = nameStart + nameLength + extraLength + commentLength
            guard next <= directory.count else { throw .damaged("central directory record \(ranges.count + 1) is cut short") }
            let nameBytes = Array(directory[nameStart..<nameStart + nameLength])
            let entryName = String(decoding: nameBytes, as: UTF8.self)
            // The zip64 extra field holds the fields whose 32-bit slots say 0xFFFFFFFF, in order.
            var extra = nameStart + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = Self.u16(directory, extra)
                let length = Self.u16(directory, extra + 2)
                if id == 1 {
                    var field = extra + 4
                    if uncompressed == 0xFFFF_FFFF, field + 8 <= extraEnd { uncompressed = Self.u64(directory, field); field += 8 }
                    if compressed == 0xFFFF_FFFF, field + 8 <= extraEnd { compressed = Self.u64(directory, field); field += 8 }
                    if localOffset == 0xFFFF_FFFF, field + 8 <= extraEnd { localOffset = Self.u64(directory, field) }
                }
                extra += 4 + length
            }
            // Every size and offset must lie inside the file before any sum is made of them
            // (zip64 fields are 64 bits: a hostile one overflows, or reads as negative).
            guard (0...size).contains(compressed), (0...size).contains(localOffset), uncompressed >= 0 else {
                throw .damaged("the record of “\(entryName)” gives a size or offset outside the file")
            }
            // The local header and its name in one read (a name of another length disagrees anyway).
            let local = try bytes(at: localOffset, count: min(30 + nameLength, Int(size - localOffset)))
            guard local.count >= 30, Self.u32(local, 0) == 0x0403_4B50 else {
                throw .mismatch(entry: entryName, detail: "the central directory points at no local header")
            }
            let localNameLength = Self.u16(local, 26)
            let localExtraLength = Self.u16(local, 28)
            let localName = localNameLength == nameLength && local.count == 30 + nameLength
                ? Array(local[30...]) : try bytes(at: localOffset + 30, count: localNameLength)
            guard localName == nameBytes else {
                throw .mismatch(
                    entry: entryName, detail: "its local header names it “\(String(decoding: localName, as: UTF8.self))”")
            }
            let dataEnd = localOffset + 30 + Int64(localNameLength + localExtraLength) + compressed
            guard dataEnd <= directoryOffset else {
                throw .damaged("the data of “\(entryName)” runs into the central directory")
            }
            ranges.append((localOffset, dataEnd, entryName))
            entries.append(
                Entry(
                    name: entryName, nameBytes: nameBytes, flags: flags, method: method, crc32: crc, compressedSize: compressed,
                    uncompressedSize: uncompressed, localHeaderOffset: localOffset,
                    dataOffset: localOffset + 30 + Int64(localNameLength + localExtraLength), externalAttributes: external,
                    madeBy: madeBy))
            position = next
        }
        ranges.sort { $0.start < $1.start }
        for (before, after) in zip(ranges, ranges.dropFirst()) where after.start < before.end {
            throw .overlap(first: before.name, second: after.name)
        }
        return entries
    }
}
