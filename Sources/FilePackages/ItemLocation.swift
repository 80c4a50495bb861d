#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import SystemPackage
import Foundation

/// Where an item lives: an open descriptor of its folder and its name there.
///
/// A document reached through a symbolic link lives where the link (or chain of links) points:
/// reads and saves go to the target, and the link stays a link.
package struct ItemLocation: Sendable {
    /// The folder that holds the item.
    package let parent: Descriptor
    /// The folder's path, for messages.
    package let parentPath: String
    /// The item's name in the folder.
    package let name: String
    /// The path the caller gave, for messages.
    package let requestedPath: String

    /// The item's resolved path.
    package var path: String { parentPath == "/" ? "/" + name : parentPath + "/" + name }

    /// Resolves `url` to its folder and name, following symbolic links at the last component
    /// (at most 40 of them).
    package static func resolve(_ url: URL, operation: DocumentKitError.Operation, using fileSystem: FileSystem)
        throws(DocumentKitError) -> ItemLocation
    {
        let requested = url.standardizedFileURL.path
        var path = requested
        for _ in 0..<40 {
            let (parentPath, name) = split(path)
            guard !name.isEmpty, name != ".", name != ".." else {
                throw DocumentKitError(
                    .invalidArgument, operation: operation, path: requested,
                    detail: "A document needs a name; “\(path)” has none.")
            }
            let parent: CInt
            do { parent = try fileSystem.open(parentPath, in: AT_FDCWD, flags: O_RDONLY | O_DIRECTORY) } catch {
                throw DocumentKitError(error, operation: operation, path: requested, step: "opening its folder “\(parentPath)”")
            }
            let descriptor = Descriptor(owning: parent)
            let status: FileStatus
            do { status = try fileSystem.status(of: name, in: parent) } catch {
                if error == .noSuchFileOrDirectory {
                    return ItemLocation(parent: descriptor, parentPath: parentPath, name: name, requestedPath: requested)
                }
                throw DocumentKitError(error, operation: operation, path: requested, step: "reading its status")
            }
            guard status.kind == .symbolicLink else {
                return ItemLocation(parent: descriptor, parentPath: parentPath, name: name, requestedPath: requested)
            }
            let destination: String
            do { destination = try fileSystem.readLink(name, in: parent) } catch {
                throw DocumentKitError(error, operation: operation, path: requested, step: "reading the symbolic link “\(path)”")
            }
            path = destination.hasPrefix("/") ? destination : (parentPath == "/" ? "" : parentPath) + "/" + destination
            path = URL(fileURLWithPath: path).standardizedFileURL.path
        }
        throw DocumentKitError(
            .symbolicLinkNotAllowed, operation: operation, path: requested,
            detail: "More than 40 symbolic links lead to it (a loop?).")
    }

    /// Splits a path into its folder and last component.
    package static func split(_ path: String) -> (parent: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
        let parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        return (parent, String(trimmed[trimmed.index(after: slash)...]))
    }
}
