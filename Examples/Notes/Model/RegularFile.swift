#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Reads the small files of a note that the app reads itself (a manifest, the attachments'
/// info), refusing anything but a regular file without waiting on it: `Data(contentsOf:)` of a
/// FIFO put in a note's place blocks until a writer comes, for ever in a server.
enum RegularFile {
    /// The bytes of the regular file at `url` (not a symbolic link), at most `limit` of them; nil
    /// when it is missing, something else, larger, or unreadable.
    static func contents(of url: URL, limit: Int = 16 << 20) -> Data? {
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= limit else { return nil }
        do { return try handle.readToEnd() ?? Data() } catch { return nil }
    }

    /// When the regular file at `url` (not a symbolic link) was last modified; nil when it is
    /// missing or something else. One `lstat`: no owner or group names looked up, as
    /// `FileManager.attributesOfItem` does (it reads `/etc/passwd` and `/etc/group` each time).
    static func modificationDate(of url: URL) -> Date? {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
    }
}
