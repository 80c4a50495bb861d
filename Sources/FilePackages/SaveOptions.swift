import DocumentKitSystem
import SystemPackage

/// How a file or package is saved.
public struct SaveOptions: Sendable {
    /// How much the save guarantees once it returns. The default is ``Durability/durable``.
    public var durability: Durability
    /// What to do when the single file being replaced has other hard links.
    public var hardLinks: HardLinkPolicy
    /// The system-call seam; tests pass one that injects failures.
    public var fileSystem: FileSystem

    /// Options for a save; every parameter has the safe default.
    public init(durability: Durability = .durable, hardLinks: HardLinkPolicy = .detach, fileSystem: FileSystem = .live) {
        self.durability = durability
        self.hardLinks = hardLinks
        self.fileSystem = fileSystem
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
    /// Refuse the save with ``DocumentKitError/Code/hardLinked``; nothing is written.
    case refuse
}
