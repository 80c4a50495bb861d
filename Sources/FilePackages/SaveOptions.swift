import DocumentKitSystem
import Foundation
import SystemPackage

/// How a file or package is saved.
public struct SaveOptions: Sendable {
    /// How much the save guarantees once it returns. The default is ``/DocumentKitSystem/Durability/durable``.
    public var durability: Durability
    /// What to do when the single file being replaced has other hard links.
    public var hardLinks: HardLinkPolicy
    /// The system-call seam; tests pass one that injects failures.
    public var fileSystem: FileSystem
    /// Where the save moves the item it replaces, instead of removing it (the version store
    /// keeps it there), or nil to remove it. A path that doesn't exist yet, on the same file
    /// system as the item. A replaced package is renamed there whole after the swap; a replaced
    /// file is hard-linked there before it (so this works where `RENAME_EXCHANGE` is missing).
    /// If that fails, the replaced item is removed as without it and a warning is logged: the
    /// caller learns whether it was kept by looking at the path.
    public var replacedItemDestination: URL?
    /// An empty folder, in another folder on the item's mount (a version store's entry), in which
    /// a package save builds the new package and which it then exchanges with the package it
    /// replaces, in one `renameat2(RENAME_EXCHANGE)`: afterwards the replaced package is this
    /// folder, and was never anywhere else. The save fails, the original intact and the folder
    /// left empty or removed, where that is impossible: the item is not a package, or the
    /// exchange is refused (another mount: `crossDevice`; no `RENAME_EXCHANGE`:
    /// `unsupportedByFileSystem`; no write permission on the package folder: `permissionDenied`);
    /// the error's step is then ``crossFolderExchangeStep``. Takes precedence over
    /// ``replacedItemDestination``.
    public var replacedPackageExchange: URL? = nil
    /// With ``replacedPackageExchange``: what the save runs once the new package is built and
    /// flushed, just before the exchange (a version store names the record it wrote beside the
    /// folder, whose disk write overlapped the package's). An error it throws fails the save,
    /// nothing exchanged: the original is intact.
    package var beforeExchange: (@Sendable () throws(DocumentKitError) -> Void)? = nil
    /// Descriptors a package save that flushes each item flushes with its new package's last
    /// files and root, all at once, before ``beforeExchange`` (a version store's record and the
    /// folder of its entry); the caller keeps them open through the save. Ignored otherwise.
    package var flushedWithPackage: [FileSystem.FlushItem] = []
    /// The item the save must replace (its device and inode; the other fields are not compared),
    /// or nil to replace whatever is at the URL, or create it. With it, the save never writes the
    /// URL again after that item was moved away or deleted (`notFound`), nor replaces another
    /// item put in its place (`changedSinceRead`): checked before anything is written, and again
    /// at the swap (the replaced item is swapped back if it isn't this one). The original is
    /// intact after either error.
    public var itemToReplace: FileIdentity?

    /// The ``/DocumentKitSystem/DocumentKitError/step`` of a save's error when ``replacedPackageExchange``
    /// could not be used: nothing was swapped, the original is intact.
    public static let crossFolderExchangeStep = "exchanging the new package with the one it replaces across folders (renameat2 RENAME_EXCHANGE)"

    /// Options for a save; every parameter has the safe default.
    public init(
        durability: Durability = .durable, hardLinks: HardLinkPolicy = .detach, fileSystem: FileSystem = .live,
        replacedItemDestination: URL? = nil, itemToReplace: FileIdentity? = nil
    ) {
        self.durability = durability
        self.hardLinks = hardLinks
        self.fileSystem = fileSystem
        self.replacedItemDestination = replacedItemDestination
        self.itemToReplace = itemToReplace
    }
}

/// What a save does with a single file that has other hard links (`st_nlink > 1`).
///
/// An atomic save writes a new file and renames it over the name, so it can never change the
/// file's other names in place. Neither policy ever writes into the shared file.
public enum HardLinkPolicy: Sendable, Hashable {
    /// Save atomically under this name: the other names keep the contents they had (they stop
    /// being the same file as this one). A notice is logged. The default.
    case detach
    /// Refuse the save with ``/DocumentKitSystem/DocumentKitError/Code/hardLinked``; nothing is written.
    case refuse
}
