#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import SystemPackage

/// An open zip file a single-file document was read from: its members are read from it on
/// demand, and a save copies the compressed bytes of unchanged members from it. The descriptor
/// stays open while any member refers to it, so a save that replaces the file does not change
/// what those members read.
final class ZipSource: Sendable {
    let descriptor: Descriptor
    let path: String
    let identity: FileIdentity
    let fileSystem: FileSystem

    init(descriptor: Descriptor, path: String, identity: FileIdentity, fileSystem: FileSystem) {
        self.descriptor = descriptor
        self.path = path
        self.identity = identity
        self.fileSystem = fileSystem
    }

    /// A key that names this file's bytes: device, inode, size and times.
    var key: String { "zip:\(identity.device):\(identity.inode):\(identity.size):\(identity.modificationTime):\(identity.changeTime ?? 0)" }

    func damaged(_ entry: String, _ detail: String) -> DocumentKitError {
        var error = DocumentKitError(.corruptData, operation: .read, path: path, step: "reading the member “\(entry)”", detail: detail)
        error.archiveEntry = entry
        return error
    }

    /// Calls `body` with the stored (compressed) bytes of `entry`, in pieces.
    func forEachStoredChunk(of entry: ZipLayoutCheck.Entry, _ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void)
        throws(DocumentKitError)
    {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        var offset = entry.dataOffset
        var remaining = entry.compressedSize
        while remaining > 0 {
            let wanted = Int(min(Int64(buffer.count), remaining))
            let count: Int
            do {
                count = try fileSystem.read(descriptor.rawValue, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), at: offset, name: path)
            } catch {
                var failure = DocumentKitError(error, operation: .read, path: path, step: "reading the member “\(entry.name)”")
                failure.archiveEntry = entry.name
                throw failure
            }
            guard count > 0 else { throw damaged(entry.name, "The file ends inside the member's data.") }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            offset += Int64(count)
            remaining -= Int64(count)
        }
    }

    /// Calls `body` with the contents of `entry`, decompressed and checked against its CRC-32
    /// and size.
    func forEachChunk(of entry: ZipLayoutCheck.Entry, _ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void)
        throws(DocumentKitError)
    {
        var crc = ZipCRC()
        var total: Int64 = 0
        func deliver(_ bytes: UnsafeRawBufferPointer) throws(DocumentKitError) {
            total += Int64(bytes.count)
            guard total <= entry.uncompressedSize else {
                throw damaged(entry.name, "It holds more than the \(entry.uncompressedSize) bytes its header says.")
            }
            crc.update(bytes)
            try body(bytes)
        }
        switch entry.method {
        case 0:
            try forEachStoredChunk(of: entry) { (bytes) throws(DocumentKitError) in try deliver(bytes) }
        case 8:
            let stream: DeflateStream
            do { stream = try DeflateStream(.decompress) } catch { throw damaged(entry.name, error.message) }
            var ended = false
            do throws(DocumentKitError) {
                try forEachStoredChunk(of: entry) { (bytes) throws(DocumentKitError) in
                    guard !ended else { return }
                    ended = try stream.process(bytes, finish: false) { (out) throws(DocumentKitError) in try deliver(out) }
                }
            } catch {
                if error.path.isEmpty { throw damaged(entry.name, error.detail ?? "\(error)") }
                throw error
            }
            guard ended else { throw damaged(entry.name, "Its DEFLATE stream is cut short.") }
        default:
            throw DocumentKitError(
                .unsupportedFormat, operation: .read, path: path, step: "reading the member “\(entry.name)”",
                detail: "It is compressed with method \(entry.method); single-file documents read stored and DEFLATE members.")
        }
        guard total == entry.uncompressedSize else {
            throw damaged(entry.name, "It holds \(total) bytes; its header says \(entry.uncompressedSize).")
        }
        guard crc.value == entry.crc32 else {
            throw damaged(entry.name, "Its CRC-32 is \(String(crc.value, radix: 16)); its header says \(String(entry.crc32, radix: 16)).")
        }
    }
}

/// Where a member of a single-file document came from (``ProvidedFileContents/context``).
struct ZipMemberOrigin: Sendable {
    let source: ZipSource
    let entry: ZipLayoutCheck.Entry
}
