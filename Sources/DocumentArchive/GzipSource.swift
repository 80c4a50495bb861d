import CZlib
import DocumentKitSystem
import SystemPackage

/// The decompressed bytes of a gzip file, for libarchive to read as a plain tar: zlib checks
/// every member's CRC-32 and length (libarchive 3.6's gzip reader does not), in the same pass as
/// the extraction. Concatenated members are read in turn; zeros after the last are allowed.
final class GzipSource {
    private var stream = z_stream()
    private let fd: CInt
    private let path: String
    private let size: Int64
    private let fileSystem: FileSystem
    private let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private var offset: Int64 = 0
    private var memberEnded = false
    private var finished = false
    /// Whether the file starts like gzip (1f 8b).
    static func looksLikeGzip(_ fd: CInt, path: String, fileSystem: FileSystem) -> Bool {
        var head: (UInt8, UInt8) = (0, 0)
        let count = withUnsafeMutableBytes(of: &head) { buffer in
            (try? fileSystem.read(fd, into: buffer, at: 0, name: path)) ?? 0
        }
        return count == 2 && head.0 == 0x1F && head.1 == 0x8B
    }

    /// Compressed bytes read from the file so far.
    private(set) var consumed: Int64 = 0
    /// Decompressed bytes produced so far.
    private(set) var produced: Int64 = 0

    enum Failure: Error {
        case system(Errno)
        case damaged(String)
    }

    init(fd: CInt, path: String, size: Int64, fileSystem: FileSystem) throws(Failure) {
        self.fd = fd
        self.path = path
        self.size = size
        self.fileSystem = fileSystem
        // 15 + 32: a gzip (or zlib) header, detected; gzip's trailer is checked at each member's end.
        guard inflateInit2_(&stream, 15 + 32, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            input.deallocate()
            throw .damaged("zlib could not start a stream")
        }
    }

    deinit {
        inflateEnd(&stream)
        input.deallocate()
    }

    /// Refills the input from the file when it is used up; false at the end of the file.
    private func refill() throws(Failure) -> Bool {
        guard stream.avail_in == 0 else { return true }
        guard offset < size else { return false }
        let count: Int
        do { count = try fileSystem.read(fd, into: input, at: offset, name: path) } catch { throw .system(error) }
        guard count > 0 else { return false }
        offset += Int64(count)
        consumed += Int64(count)
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_in = uInt(count)
        return true
    }

    /// Fills `output` with the next decompressed bytes; 0 at the clean end of the last member.
    func read(into output: UnsafeMutableRawBufferPointer) throws(Failure) -> Int {
        while !finished {
            if memberEnded {
                guard try refill() else {
                    finished = true
                    break
                }
                let rest = UnsafeRawBufferPointer(start: stream.next_in, count: Int(stream.avail_in))
                if rest.allSatisfy({ $0 == 0 }) {
                    stream.avail_in = 0
                    continue
                }
                inflateReset(&stream)
                memberEnded = false
            }
            guard try refill() else { throw .damaged("The gzip data ends before its member does (the file is cut short).") }
            stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let status = inflate(&stream, Z_NO_FLUSH)
            let count = output.count - Int(stream.avail_out)
            produced += Int64(count)
            switch status {
            case Z_STREAM_END: memberEnded = true
            case Z_OK, Z_BUF_ERROR: break
            default:
                let text = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw .damaged("The gzip data is damaged: \(text).")
            }
            if count > 0 { return count }
        }
        return 0
    }

    /// Reads what libarchive left after the tar's end (padding, the gzip trailer) so that every
    /// member's CRC-32 and length are checked; at most `limit` more bytes are decompressed.
    func drain(limit: Int64) throws(Failure) {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { scratch.deallocate() }
        let start = produced
        while try read(into: scratch) > 0 {
            if produced - start > limit { throw .damaged("More than \(limit) bytes follow the end of the tar.") }
        }
    }
}
