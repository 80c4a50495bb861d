#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation
import SystemPackage

/// Where a package save builds the new tree when the tree it replaces has a destination
/// (``SaveOptions/replacedItemDestination``): at the destination itself, so that one
/// `renameat2(RENAME_EXCHANGE)` puts the new tree in place and the replaced one there, and the
/// replaced tree is never anywhere else (no temporary name in the item's folder for another
/// process's recovery to take for litter).
struct ExchangeFolder {
    /// The destination's folder, open.
    let folder: Descriptor
    let folderPath: String
    /// The destination's name in it.
    let name: String
    /// The new tree's root, created empty with `mode` (the caller closes it).
    let root: CInt

    init(_ destination: URL, mode: mode_t, fileSystem: FileSystem, documentPath: String) throws(DocumentKitError) {
        folderPath = destination.deletingLastPathComponent().path
        name = destination.lastPathComponent
        func fail(_ errno: Errno, _ step: String) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: documentPath, step: step, originalIsIntact: true)
        }
        do { folder = Descriptor(owning: try fileSystem.open(folderPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY)) } catch {
            throw fail(error, "opening “\(folderPath)”, where the replaced package goes")
        }
        do throws(Errno) {
            try fileSystem.makeDirectory(name, in: folder.rawValue, mode: mode)
            do { root = try fileSystem.open(name, in: folder.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) } catch {
                _ = try? fileSystem.removeDirectory(name, in: folder.rawValue)
                throw error
            }
        } catch {
            throw fail(error, "creating the new package at “\(destination.path)”")
        }
    }
}
