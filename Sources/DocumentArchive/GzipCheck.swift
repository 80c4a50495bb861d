import CZlib
import DocumentKitSystem
import SystemPackage

/// Reads a gzip file through zlib once before its tar is extracted: zlib checks every member's
/// CRC-32 and length, which libarchive 3.6's gzip reader does not (a changed byte in a stored
/// block would otherwise import silently). The bytes it decompresses count against the
/// import's total and ratio limits, so a bomb is stopped here, before anything is written.
struct GzipCheck {
    let fd: CInt
    let path: String
    let size: Int64
    let limits: ArchiveLimits
    let fileSystem: FileSystem

    /// Whether the file starts like gzip (1f 8b).
    static func looksLikeGzip(_ fd: CInt, path: String, fileSystem: FileSystem) -> Bool {
        var head: (UInt8, UInt8) = (0, 0)
        let count = withUnsafeMutableBytes(of: &head) { buffer in
            (try? fileSystem.read(fd, into: buffer, at: 0, name: path)) ?? 0
        }
        return count == 2 && head.0 == 0x1F && head.1 == 0x8B
    }

    private func damaged(_ detail: String) -> DocumentKitError {
        DocumentKitError(.corruptData, operation: .read, path: path, step: "checking the gzip stream", detail: detail)
    }

    func run() throws(DocumentKitError) {
        var stream = z_stream()
        // 15 + 32: a zlib or gzip header, detected; gzip's trailer (CRC-32, length) is checked.
        guard inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw damaged("zlib could not start a stream")
        }
        defer { inflateEnd(&stream) }
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 17, alignment: 16)
        defer {
            input.deallocate()
            output.deallocate()
        }
        var offset: Int64 = 0
        var produced: Int64 = 0
        var ended = false
        while offset < size {
            let count: Int
            do { count = try fileSystem.read(fd, into: input, at: offset, name: path) } catch {
                throw DocumentKitError(error, operation: .read, path: path, step: "checking the gzip stream")
            }
            guard count > 0 else { break }
            offset += Int64(count)
            stream.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_in = uInt(count)
            while stream.avail_in > 0 {
                if ended {
                    // Another gzip member follows (concatenated files): check it too. Zeros after
                    // the last member (tar's padding, some writers') are allowed.
                    let rest = UnsafeRawBufferPointer(start: stream.next_in, count: Int(stream.avail_in))
                    if rest.allSatisfy({ $0 == 0 }) {
                        stream.avail_in = 0
                        break
                    }
                    inflateReset(&stream)
                    ended = false
                }
                stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(output.count)
                let status = inflate(&stream, Z_NO_FLUSH)
                produced += Int64(output.count - Int(stream.avail_out))
                if produced > limits.maximumTotalBytes + limits.maximumTotalBytes / 8 + (1 << 20) {
                    throw DocumentKitError(
                        .archiveLimitExceeded, operation: .read, path: path, step: "checking the gzip stream",
                        detail: "It expands past \(limits.maximumTotalBytes) bytes, the limit.")
                }
                let consumed = max(offset - Int64(stream.avail_in), 1)
                if produced > limits.compressionRatioGrace, Double(produced) > limits.maximumCompressionRatio * Double(consumed) {
                    throw DocumentKitError(
                        .archiveLimitExceeded, operation: .read, path: path, step: "checking the gzip stream",
                        detail: "It expands \(Int(Double(produced) / Double(consumed))) times its size (\(produced) bytes from \(consumed)), "
                            + "over the limit of \(Int(limits.maximumCompressionRatio)): a decompression bomb?")
                }
                switch status {
                case Z_STREAM_END: ended = true
                case Z_OK, Z_BUF_ERROR: break
                default:
                    let text = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    throw damaged("The gzip data is damaged: \(text).")
                }
                if status == Z_BUF_ERROR { break }
            }
        }
        guard ended else { throw damaged("The gzip data ends before its last member does (the file is cut short).") }
    }
}
