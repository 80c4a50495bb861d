#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem

/// What one folder of the library holds: its packages and its subfolders (hidden names, symbolic
/// links and files are not documents and are skipped).
struct FolderListing: Sendable {
    var stamp: FileStamp
    var packages: [(path: String, stamp: FileStamp)]
    var folders: [String]
}

extension EntryReader {
    /// The stamp of the folder at `relativePath` ("" for the library), nil if it is not a folder.
    func folderStamp(_ relativePath: String) -> FileStamp? { packageStamp(relativePath) }

    /// What `stat` says of the folder at `relativePath` (its link count too), nil if it is not a folder.
    func folderStatus(_ relativePath: String) -> FileStatus? {
        guard let status = try? fileSystem.status(of: absolutePath(relativePath), in: AT_FDCWD), status.kind == .directory
        else { return nil }
        return status
    }

    /// Lists the folder at `relativePath`: one `readdir` and an `fstatat` per name.
    func list(_ relativePath: String) -> FolderListing? {
        let path = absolutePath(relativePath)
        let folder: Descriptor
        do { folder = Descriptor(owning: try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
            return nil
        }
        guard let status = try? fileSystem.status(of: folder.rawValue, name: path),
            let names = try? fileSystem.contentsOfDirectory(folder.rawValue, name: path)
        else { return nil }
        var listing = FolderListing(stamp: FileStamp(status), packages: [], folders: [])
        let prefix = relativePath.isEmpty ? "" : relativePath + "/"
        for name in names where !name.hasPrefix(".") {
            guard let child = try? fileSystem.status(of: name, in: folder.rawValue), child.kind == .directory else { continue }
            if isPackageName(name) {
                listing.packages.append((prefix + name, FileStamp(child)))
            } else {
                listing.folders.append(prefix + name)
            }
        }
        return listing
    }
}

/// The folder part of a relative path: "" for a path at the library's top.
func parentPath(of relativePath: String) -> String {
    // By bytes: a search by `Character` costs a grapheme break check per character, for every entry of a refresh.
    let bytes = relativePath.utf8
    guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
    return String(relativePath[..<slash])
}
