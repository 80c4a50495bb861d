#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem

extension EntryReader {
    /// The library folder, open for a refresh's `fstatat`s relative to it (a path walk of one
    /// name instead of the whole absolute path per entry); nil if it can't be opened.
    func openLibrary() -> Descriptor? {
        guard let fd = try? fileSystem.open(libraryPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) else { return nil }
        return Descriptor(owning: fd)
    }

    /// ``packageStamp(_:)``, relative to the open library folder `library` (nil: by absolute path).
    func packageStamp(_ relativePath: String, in library: Descriptor?) -> FileStamp? {
        guard let library else { return packageStamp(relativePath) }
        guard let status = try? fileSystem.status(of: relativePath, in: library.rawValue), status.kind == .directory else { return nil }
        return FileStamp(status)
    }

    /// ``manifestStamp(_:)``, relative to the open library folder `library` (nil: by absolute path).
    func manifestStamp(_ relativePath: String, in library: Descriptor?) -> FileStamp? {
        guard let library else { return manifestStamp(relativePath) }
        guard let status = try? fileSystem.status(of: relativePath + "/" + configuration.manifestName, in: library.rawValue)
        else { return nil }
        return FileStamp(status)
    }
}
