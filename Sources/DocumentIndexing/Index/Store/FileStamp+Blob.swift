import Foundation

extension FileStamp {
    /// The stamp as 40 bytes: device, inode, size, modification and change times, little-endian.
    var blob: Data {
        var data = Data(capacity: 40)
        for value in [device, inode, UInt64(bitPattern: size), UInt64(bitPattern: modificationTime), UInt64(bitPattern: changeTime)] {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// The stamp of a 40-byte blob; nil for anything else.
    init?(blob: Data?) {
        guard let blob, blob.count == 40 else { return nil }
        func value(_ index: Int) -> UInt64 {
            blob.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
        }
        self.init(
            device: value(0), inode: value(1), size: Int64(bitPattern: value(2)),
            modificationTime: Int64(bitPattern: value(3)), changeTime: Int64(bitPattern: value(4)))
    }
}
