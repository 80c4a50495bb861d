#if canImport(Glibc)
import Glibc
#endif
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

/// The bytes of the regular file at `path`, at most `limit` of them; nil when it is missing, not
/// a regular file, larger, or unreadable. Opened without waiting (`O_NONBLOCK`): a FIFO put where a
/// manifest should be is refused at once, not waited on for a writer. A symbolic link at `path`
/// is followed only with `followingLink`.
package func readRegularFile(
    atPath path: String, followingLink: Bool = false, limit: Int64 = .max, using fileSystem: FileSystem
) -> Data? {
    readRegularFileWithStatus(atPath: path, followingLink: followingLink, limit: limit, using: fileSystem)?.data
}

/// ``readRegularFile(atPath:followingLink:limit:using:)``, with the `fstat` of the file read:
/// the identity of the bytes returned (a `stat` by path, before or after, may see another file).
package func readRegularFileWithStatus(
    atPath path: String, followingLink: Bool = false, limit: Int64 = .max, using fileSystem: FileSystem
) -> (data: Data, status: FileStatus)? {
    let flags = O_RDONLY | O_NONBLOCK | (followingLink ? 0 : O_NOFOLLOW)
    guard let fd = try? fileSystem.open(path, in: AT_FDCWD, flags: flags) else { return nil }
    defer { try? fileSystem.close(fd, name: path) }
    guard let status = try? fileSystem.status(of: fd, name: path), status.kind == .regular, status.size <= limit,
        let data = try? readAll(fd, size: Int(status.size), name: path, using: fileSystem)
    else { return nil }
    return (data, status)
}
