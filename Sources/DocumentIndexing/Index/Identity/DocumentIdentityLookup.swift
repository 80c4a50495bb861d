import Foundation

/// Finds the items of a folder whose manifests hold a document identifier, so that a document's
/// first save in place needn't read the manifest of every sibling to learn whether it is a copy
/// (see `Document.identityLookup`).
public protocol DocumentIdentityLookup: Sendable {
    /// The items directly in `folder` whose manifests may hold `identifier`: a superset is fine
    /// (each is read to check), a missing one is not. Nil when the lookup doesn't know `folder`:
    /// the caller then lists the folder.
    func items(holding identifier: String, in folder: URL) -> [URL]?
}

/// A ``DocumentIndex``'s persisted entries as a ``DocumentIdentityLookup``: one indexed query.
struct IndexIdentityLookup: DocumentIdentityLookup {
    let database: IndexDatabase
    let libraryPath: String

    func items(holding identifier: String, in folder: URL) -> [URL]? {
        let path = folder.standardizedFileURL.path
        let parent: String
        if path == libraryPath {
            parent = ""
        } else if path.hasPrefix(libraryPath == "/" ? "/" : libraryPath + "/") {
            parent = String(path.dropFirst(libraryPath == "/" ? 1 : libraryPath.count + 1))
        } else {
            return nil
        }
        guard let paths = try? database.paths(withIdentifier: identifier, inFolder: parent) else { return nil }
        return paths.map { URL(fileURLWithPath: libraryPath, isDirectory: true).appendingPathComponent($0, isDirectory: true) }
    }
}

extension DocumentIndex {
    /// The index as a ``DocumentIdentityLookup`` for the documents of its library (give it to
    /// `Document.identityLookup`): it answers from the persisted index as it is, so refresh the
    /// listing first (``refreshListing()``). Nil for an index kept in memory only.
    public func identityLookup() -> (any DocumentIdentityLookup)? {
        guard let database, (try? database.isBuilt()) == true else { return nil }
        return IndexIdentityLookup(database: database, libraryPath: reader.libraryPath)
    }
}
