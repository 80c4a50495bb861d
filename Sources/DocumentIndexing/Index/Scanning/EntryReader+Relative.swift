#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import Dispatch
import Foundation

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
        var manifestPath = ""
        manifestPath.reserveCapacity(relativePath.utf8.count + 1 + configuration.manifestName.utf8.count)
        manifestPath += relativePath
        manifestPath += "/"
        manifestPath += configuration.manifestName  // one allocation per entry, at 100,000 entries
        guard let status = try? fileSystem.status(of: manifestPath, in: library.rawValue) else { return nil }
        return FileStamp(status)
    }
}

/// A package's stamps as one look took them: its folder's, and its manifest's (nil: not there).
struct PackageStamps: Sendable {
    var package: FileStamp?
    var manifest: FileStamp?
}

extension EntryReader {
    /// Fewer packages than this are stat'ed or read on the calling thread.
    static let concurrentThreshold = 2_048

    /// The stamps of `paths` (relative to the open library folder `library`), in order: a full
    /// refresh's two `fstatat` per entry, spread over the machine's cores when there are many
    /// (a start-up on 100,000 documents is mostly path lookups in the kernel).
    /// `packages`, when given, are the package stamps a listing just took: only the manifests are stat'ed.
    func stamps(of paths: [String], packages: [FileStamp]? = nil, in library: Descriptor?) -> [PackageStamps] {
        concurrentMap(paths.count, threshold: Self.concurrentThreshold) { index in
            let path = paths[index]
            return PackageStamps(package: packages?[index] ?? packageStamp(path, in: library), manifest: manifestStamp(path, in: library))
        }
    }

    /// The packages at `paths` read (``read(_:)``), in order, spread over the cores when there are
    /// many: a library indexed for the first time.
    func read(_ paths: [String]) -> [EntryRecord?] {
        concurrentMap(paths.count, threshold: Self.concurrentThreshold) { read(paths[$0]) }
    }
}
