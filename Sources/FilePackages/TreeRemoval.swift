#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage

/// Removes `name` in `directory` and, if it is a directory, everything in it, without following
/// symbolic links. Missing items count as removed.
package func removeItem(_ name: String, in directory: CInt, using fileSystem: FileSystem) throws(Errno) {
    let status: FileStatus
    do { status = try fileSystem.status(of: name, in: directory) } catch {
        if error == .noSuchFileOrDirectory { return }
        throw error
    }
    guard status.kind == .directory else {
        do { try fileSystem.unlink(name, in: directory) } catch {
            if error != .noSuchFileOrDirectory { throw error }
        }
        return
    }
    let fd = try fileSystem.open(name, in: directory, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    defer { Glibc.close(fd) }
    try removeContents(of: fd, using: fileSystem)
    do { try fileSystem.removeDirectory(name, in: directory) } catch {
        if error != .noSuchFileOrDirectory { throw error }
    }
}

/// Removes everything inside the open directory `fd`.
package func removeContents(of fd: CInt, using fileSystem: FileSystem) throws(Errno) {
    for child in try fileSystem.contentsOfDirectory(fd, name: ".") {
        // Most members are files: try unlink first, and recurse only for directories.
        do {
            try fileSystem.unlink(child, in: fd)
        } catch {
            switch error {
            case .noSuchFileOrDirectory: continue
            case .isDirectory, .notPermitted: try removeItem(child, in: fd, using: fileSystem)
            default: throw error
            }
        }
    }
}
