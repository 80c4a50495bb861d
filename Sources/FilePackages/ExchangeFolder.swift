#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import SystemPackage

/// Where a package save builds the new tree when it is to be exchanged with the package it
/// replaces across folders (``SaveOptions/replacedPackageExchange``): an empty folder the caller
/// made, so that one `renameat2(RENAME_EXCHANGE)` puts the new tree in place and the replaced one
/// there (no temporary name in the item's folder for another process's recovery to take for litter).
struct ExchangeFolder {
    /// The folder's parent, open.
    let folder: Descriptor
    let folderPath: String
    /// The folder's name in it.
    let name: String
    /// The folder, the new tree's root (the caller closes it).
    let root: CInt

    /// Opens `destination`, which must be an empty folder; `current`: the item it replaces.
    init(_ destination: URL, current: FileStatus?, fileSystem: FileSystem, documentPath: String) throws(DocumentKitError) {
        folderPath = destination.deletingLastPathComponent().path
        name = destination.lastPathComponent
        guard let current, current.kind == .directory else {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: documentPath, step: SaveOptions.crossFolderExchangeStep, originalIsIntact: true,
                detail: current == nil ? "There is no package to exchange with." : "It is not a package: it can't be exchanged with one.")
        }
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: documentPath, step: step, originalIsIntact: true)
        }
        do { folder = Descriptor(owning: try fileSystem.open(folderPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)) } catch {
            throw fail(error, "opening “\(folderPath)”, where the new package is built")
        }
        do { root = try fileSystem.open(name, in: folder.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
            throw fail(error, "opening “\(destination.path)”, where the new package is built")
        }
        let names: [String]
        do { names = try fileSystem.contentsOfDirectory(root, name: destination.path) } catch {
            Glibc.close(root)
            throw fail(error, "listing “\(destination.path)”, where the new package is built")
        }
        guard names.isEmpty else {
            Glibc.close(root)
            throw DocumentKitError(
                .alreadyExists, operation: .save, path: documentPath, originalIsIntact: true,
                detail: "“\(destination.path)”, where the new package is to be built, is not empty.")
        }
    }
}
