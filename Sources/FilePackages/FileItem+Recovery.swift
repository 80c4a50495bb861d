#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation

extension FileItem {
    /// Completes what interrupted saves left in the folder at `url`, as every open and save does
    /// in its own item's folder: an interrupted fallback swap (file systems without
    /// `RENAME_EXCHANGE`) is rolled forward or back, so its item is not missing, and temporary
    /// items no live process holds are removed.
    ///
    /// Call it before listing a folder of documents: an item whose fallback swap was cut off
    /// between its two renames exists only under hidden names until then, and a listing would
    /// not show it (nor should a new item be made under its name).
    ///
    /// - Returns: The names of the items whose interrupted swap was completed.
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the folder (it can't be listed) or the item (its
    ///   rename intent is malformed; nothing is changed then).
    @discardableResult
    public static func completeInterruptedSaves(inFolderAt url: URL, fileSystem: FileSystem = .live) throws(DocumentKitError) -> [String] {
        let path = url.standardizedFileURL.path
        let folder: CInt
        do { folder = try fileSystem.open(path, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY) } catch {
            throw DocumentKitError(error, operation: .recover, path: path, step: "opening the folder")
        }
        defer { Glibc.close(folder) }
        return try InterruptedSaveRecovery(fileSystem: fileSystem).run(in: folder, path: path).recovered
    }
}
