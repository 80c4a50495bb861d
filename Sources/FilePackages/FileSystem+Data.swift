import DocumentKitSystem
import Foundation
import SystemPackage

extension FileSystem {
    /// Writes all of `data` to `fd`.
    package func write(_ fd: CInt, _ data: Data, name: String) throws(Errno) {
        var failure: Errno?
        data.withUnsafeBytes { bytes in
            do throws(Errno) { try write(fd, bytes, name: name) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// Reads a whole file whose expected size is `size` (it may have grown or shrunk since).
package func readAll(_ fd: CInt, size: Int, name: String, using fileSystem: FileSystem) throws(Errno) -> Data {
    var data = Data(count: size)
    var total = 0
    while true {
        if total == data.count { data.count += max(4096, data.count / 2) }
        var failure: Errno?
        let count = data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            do throws(Errno) {
                return try fileSystem.read(
                    fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), at: Int64(total), name: name)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        if count == 0 { break }
        total += count
    }
    data.count = total
    return data
}
