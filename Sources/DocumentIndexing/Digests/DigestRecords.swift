import DocumentKitSystem
import FormatVersioning
import Foundation

/// The `members` blob of a package's row: one 80-byte record per member file, little-endian:
/// device, inode, size, modification time, change time, reference time (8 bytes each; times in
/// nanoseconds since 1970), then the SHA-256 (32 bytes).
enum DigestRecords {
    static let recordSize = 80

    static func encode(_ digests: [CachedMemberDigest]) -> Data {
        var data = Data(count: digests.count * recordSize)
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            func put(_ value: UInt64) {
                buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            for digest in digests {
                let identity = digest.identity
                put(identity.device)
                put(identity.inode)
                put(UInt64(bitPattern: identity.size))
                put(UInt64(bitPattern: identity.modificationTime))
                put(UInt64(bitPattern: identity.changeTime ?? 0))
                put(UInt64(bitPattern: digest.referenceTime))
                Hex.decode(digest.sha256, into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + 32]))
                offset += 32
            }
        }
        return data
    }

    /// The records of a blob; nil if its length is not a whole number of records.
    static func decode(_ data: Data) -> [CachedMemberDigest]? {
        guard data.count % recordSize == 0 else { return nil }
        return data.withUnsafeBytes { buffer in
            var digests: [CachedMemberDigest] = []
            digests.reserveCapacity(buffer.count / recordSize)
            var offset = 0
            func take() -> UInt64 {
                defer { offset += 8 }
                return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            }
            while offset < buffer.count {
                let identity = FileIdentity(
                    device: take(), inode: take(), size: Int64(bitPattern: take()),
                    modificationTime: Int64(bitPattern: take()), changeTime: Int64(bitPattern: take()))
                let reference = Int64(bitPattern: take())
                let sha256 = Hex.encode(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 32]))
                offset += 32
                digests.append(CachedMemberDigest(identity: identity, sha256: sha256, referenceTime: reference))
            }
            return digests
        }
    }
}

/// Lower-case hexadecimal digits of bytes, both ways.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = digits[Int(byte >> 4)]
                output[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// Writes the bytes of `hex` (64 digits for a SHA-256) into `output`; zeros where a digit is invalid.
    static func decode(_ hex: String, into output: UnsafeMutableRawBufferPointer) {
        var utf8 = hex.utf8.makeIterator()
        for index in 0..<output.count {
            let high = utf8.next().map(value) ?? 0
            let low = utf8.next().map(value) ?? 0
            output[index] = high << 4 | low
        }
    }

    private static func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}
