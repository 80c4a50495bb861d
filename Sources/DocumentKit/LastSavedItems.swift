import DocumentKitSystem
import FileVersions
import Synchronization

/// Which item this process last saved in place for each document identifier: the file (device
/// and inode) a save put at the document's place. `mv` keeps it; `cp -r` makes another file. So
/// at a document's first save, the item this process saved last is the original, wherever it
/// was moved since, and another item with its identifier is a copy (Document+Identity.swift).
/// Bounded: two generations of 2,048 identifiers.
enum LastSavedItems {
    private static let items = Mutex(Generations<FileIdentity>(limit: 2_048))

    /// Remembers that the item `identity` was saved with `identifier` in its manifest.
    static func remember(_ identity: FileIdentity, for identifier: String) {
        items.withLock { $0.insert(identity, for: identifier) }
    }

    /// Whether `identity` is the file `saved` names: the same device, inode and modification time
    /// (a move keeps them; a copy that got the inode of a file deleted since has its own time).
    static func isSame(_ saved: FileIdentity, _ identity: FileIdentity) -> Bool {
        saved.device == identity.device && saved.inode == identity.inode && saved.modificationTime == identity.modificationTime
    }

    /// The item this process last saved with `identifier`, if it remembers one.
    static func item(for identifier: String) -> FileIdentity? {
        items.withLock { $0.value(for: identifier) }
    }
}
