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
        guard let status = try? fileSystem.status(of: relativePath + "/" + configuration.manifestName, in: library.rawValue)
        else { return nil }
        return FileStamp(status)
    }
}

/// A package's stamps as one look took them: its folder's, and its manifest's (nil: not there).
struct PackageStamps: Sendable {
    var package: FileStamp?
    var manifest: FileStamp?
}

extension EntryReader {
    /// Fewer packages than this are stat'ed on the calling thread.
    static let concurrentStampThreshold = 2_048

    /// The stamps of `paths` (relative to the open library folder `library`), in order: a full
    /// refresh's two `fstatat` per entry, spread over the machine's cores when there are many
    /// (a start-up on 100,000 documents is mostly path lookups in the kernel).
    /// `packages`, when given, are the package stamps a listing just took: only the manifests are stat'ed.
    func stamps(of paths: [String], packages: [FileStamp]? = nil, in library: Descriptor?) -> [PackageStamps] {
        @Sendable func stamps(_ index: Int) -> PackageStamps {
            let path = paths[index]
            return PackageStamps(package: packages?[index] ?? packageStamp(path, in: library), manifest: manifestStamp(path, in: library))
        }
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, 4)
        guard paths.count >= Self.concurrentStampThreshold, workers > 1 else { return paths.indices.map(stamps) }
        let results = StampSlots(count: paths.count)
        let chunk = (paths.count + workers - 1) / workers
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in (worker * chunk)..<min(paths.count, (worker + 1) * chunk) { results.set(index, stamps(index)) }
        }
        return results.take()
    }
}

/// One slot per path, each written by exactly one worker of ``EntryReader/stamps(of:in:)``
/// before `concurrentPerform` returns, and read only after: no two threads touch one slot.
private final class StampSlots: @unchecked Sendable {
    private let base: UnsafeMutablePointer<PackageStamps>

    init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: PackageStamps(), count: count)
        self.count = count
    }

    private let count: Int

    func set(_ index: Int, _ stamps: PackageStamps) { base[index] = stamps }

    func take() -> [PackageStamps] { Array(UnsafeBufferPointer(start: base, count: count)) }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
