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
}
