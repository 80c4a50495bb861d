import CZlib
import DocumentKitSystem

/// A raw DEFLATE stream (no zlib or gzip header), as zip stores members, in either direction.
final class DeflateStream {
    enum Direction { case compress, decompress }

    private var stream = z_stream()
    private let direction: Direction
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

    init(_ direction: Direction, level: Int32 = 6) throws(ZlibFailure) {
        self.direction = direction
        let size = Int32(MemoryLayout<z_stream>.size)
        let status =
            switch direction {
            case .compress: deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), size)
            case .decompress: inflateInit2_(&stream, -15, zlibVersion(), size)
            }
        guard status == Z_OK else {
            output.deallocate()
            throw ZlibFailure(status: status, message: "zlib could not start a stream")
        }
    }

    deinit {
        switch direction {
        case .compress: deflateEnd(&stream)
        case .decompress: inflateEnd(&stream)
        }
        output.deallocate()
    }

    /// Feeds `input` (empty and `finish` at the end) and calls `body` with each piece of output.
    /// Returns whether the stream ended (decompression: its end marker was read).
    @discardableResult
    func process(
        _ input: UnsafeRawBufferPointer, finish: Bool, _ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void
    ) throws(DocumentKitError) -> Bool {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        while true {
            stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let status =
                switch direction {
                case .compress: deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                case .decompress: inflate(&stream, Z_NO_FLUSH)
                }
            let produced = output.count - Int(stream.avail_out)
            if produced > 0 { try body(UnsafeRawBufferPointer(rebasing: output[..<produced])) }
            switch status {
            case Z_STREAM_END: return true
            case Z_OK: if stream.avail_out != 0 && stream.avail_in == 0 && !finish { return false }
            case Z_BUF_ERROR: return false  // no progress possible: needs more input
            default:
                let text = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw DocumentKitError(.corruptData, operation: .read, path: "", detail: "DEFLATE: \(text)")
            }
        }
    }
}

/// zlib's failure to start a stream.
struct ZlibFailure: Error {
    let status: Int32
    let message: String
}

/// The CRC-32 of zip (and gzip), updated piece by piece.
struct ZipCRC {
    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        value = UInt32(crc32(uLong(value), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }
}
