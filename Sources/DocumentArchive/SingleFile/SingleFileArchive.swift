#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import SystemPackage

/// Documents stored as one zip file instead of a package folder (`Document.archiveFormat`),
/// as office formats are: the package tree a document reads and writes is the archive's.
///
/// Reading is lazy: opening lists the members (the zip's central directory); a member is read
/// and decompressed when asked for, and checked against its CRC-32 and size. A save writes a new
/// archive, copying the compressed bytes of the members it did not change from the archive they
/// were read from, and compressing only the others (`Formats/archive/v1/SPEC.md`, "Single-file
/// documents").
public enum SingleFileArchive {
    /// The package tree stored in the zip file `file`, read at `url` (where `file` was read):
    /// members are read from the file on demand, through a descriptor kept open while they exist.
    ///
    /// - Throws: `changedSinceRead` if the file at `url` is no longer `file`; `corruptData` if
    ///   it is no zip or is damaged; `unsafeArchiveEntry` for a name that leads out of the
    ///   package, a duplicate, or overlapping members.
    public static func expand(_ file: FileWrapper, at url: URL, using fileSystem: FileSystem = .live) throws(DocumentKitError) -> FileWrapper {
        let path = url.standardizedFileURL.path
        guard file.isRegularFile else {
            throw DocumentKitError(
                .unsupportedFormat, operation: .open, path: path, originalIsIntact: true,
                detail: "It is a \(file.kind == .directory ? "folder" : "link"); documents of this type are single zip files.")
        }
        let fd: CInt
        do { fd = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY) } catch {
            throw DocumentKitError(error, operation: .open, path: path, step: "opening the archive")
        }
        let descriptor = Descriptor(owning: fd)
        let status: FileStatus
        do { status = try fileSystem.status(of: fd, name: path) } catch {
            throw DocumentKitError(error, operation: .open, path: path, step: "reading its status")
        }
        if let identity = file.fileIdentity, !identity.isUnchanged(comparedTo: status.identity) {
            throw DocumentKitError(.changedSinceRead, operation: .open, path: path, detail: "It was replaced while it was opened; open it again.")
        }
        guard let entries = try DocumentArchiver.zipEntries(fd, size: status.size, path: path, fileSystem: fileSystem) else {
            throw DocumentKitError(
                .corruptData, operation: .open, path: path, originalIsIntact: true, detail: "It is not a zip archive.")
        }
        let source = ZipSource(descriptor: descriptor, path: path, identity: status.identity, fileSystem: fileSystem)
        let root = Node()
        for entry in entries {
            let components: [String]
            do { components = try EntryPath.components(of: entry.name, limits: .default) } catch {
                var failure = DocumentKitError(.unsafeArchiveEntry, operation: .open, path: path, step: "reading the member “\(entry.name)”", detail: error.reason)
                failure.archiveEntry = entry.name
                throw failure
            }
            let mode = entry.madeBy >> 8 == 3 ? entry.externalAttributes >> 16 : 0
            let isFolder = entry.name.hasSuffix("/") || mode & 0o170000 == 0o040000
            if components.isEmpty {
                guard isFolder else {
                    var failure = DocumentKitError(
                        .unsafeArchiveEntry, operation: .open, path: path, step: "reading the member “\(entry.name)”",
                        detail: "Its name names the package itself, and it is no folder.")
                    failure.archiveEntry = entry.name
                    throw failure
                }
                continue
            }
            var node = root
            for (index, name) in components.enumerated() {
                let last = index == components.count - 1
                if let child = node.children[name] {
                    guard child.file == nil, !(last && !isFolder) else {
                        var failure = DocumentKitError(
                            .unsafeArchiveEntry, operation: .open, path: path, step: "reading the member “\(entry.name)”",
                            detail: "Two members are named “\(components[...index].joined(separator: "/"))”.")
                        failure.archiveEntry = entry.name
                        throw failure
                    }
                    node = child
                    continue
                }
                let child = Node()
                node.children[name] = child
                node = child
                if last && !isFolder { child.file = try member(entry, mode: mode, source: source) }
            }
            if isFolder, mode & 0o777 != 0 { node.permissions = mode & 0o777 }
        }
        return root.wrapper()
    }

    /// The wrapper of one member: a symbolic link (read now: it is a few bytes) or a file read on demand.
    private static func member(_ entry: ZipLayoutCheck.Entry, mode: UInt32, source: ZipSource) throws(DocumentKitError) -> FileWrapper {
        if mode & 0o170000 == 0o120000 {
            var target = Data()
            try source.forEachChunk(of: entry) { (bytes) throws(DocumentKitError) in target.append(contentsOf: bytes) }
            return FileWrapper(symbolicLinkWithDestination: String(decoding: target, as: UTF8.self))
        }
        let contents = ProvidedFileContents(
            size: entry.uncompressedSize, key: source.key + "/" + entry.name, context: ZipMemberOrigin(source: source, entry: entry)
        ) { (body) throws(DocumentKitError) in
            try source.forEachChunk(of: entry, body)
        }
        return FileWrapper(regularFileWithProvidedContents: contents, permissions: mode & 0o777 == 0 ? nil : mode & 0o777)
    }

    /// A folder being assembled from the archive's flat list of members.
    private final class Node {
        var children: [String: Node] = [:]
        var file: FileWrapper?
        var permissions: UInt32?

        func wrapper() -> FileWrapper {
            if let file { return file }
            var folder = FileWrapper(directoryWithFileWrappers: children.mapValues { $0.wrapper() })
            folder.permissions = permissions
            return folder
        }
    }

    /// A regular file whose contents are the zip archive of `package`, produced while it is saved
    /// (nothing is held in memory): members read from an archive are copied compressed, the
    /// others compressed with DEFLATE. The same tree gives the same bytes.
    public static func archive(_ package: FileWrapper, path: String) -> FileWrapper {
        let contents = ProvidedFileContents(size: nil) { (body) throws(DocumentKitError) in
            let outcome: Result<Void, DocumentKitError> = withoutActuallyEscaping(body) { output in
                var writer = ZipWriter(path: path, output: output)
                do throws(DocumentKitError) { try writer.write(package) } catch { return .failure(error) }
                return .success(())
            }
            try outcome.get()
        }
        return FileWrapper(regularFileWithProvidedContents: contents)
    }
}
