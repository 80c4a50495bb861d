import Foundation

/// Options of a coordinated read, with the meaning `NSFileCoordinator.ReadingOptions` has.
public struct CoordinatedReadingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Don't ask presenters to save their changes first. (Presenters arrive in a later release;
    /// the option is accepted now so callers can state their intent.)
    public static let withoutChanges = CoordinatedReadingOptions(rawValue: 1 << 0)
    /// If the item is a symbolic link, coordinate (and hand the accessor) the item it points to.
    public static let resolvesSymbolicLink = CoordinatedReadingOptions(rawValue: 1 << 1)
    /// The read looks only at what is on disk now, the item's metadata (its name, size, dates,
    /// permissions), as `NSFileCoordinator.ReadingOptions.immediatelyAvailableMetadataOnly`.
    /// Apple's coordinator then grants the read without waiting for a cloud download; on Linux
    /// every item is already local, so the read is granted as any read is: after the writers
    /// it must wait for, and presenters are still asked to save first (add ``withoutChanges``
    /// not to ask them). Reading the contents under it works, but states the wrong intent.
    public static let immediatelyAvailableMetadataOnly = CoordinatedReadingOptions(rawValue: 1 << 2)
}

/// Options of a coordinated write, with the meaning `NSFileCoordinator.WritingOptions` has.
/// Use at most one.
public struct CoordinatedWritingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The write deletes the item. For a folder, it waits for every coordination of anything
    /// inside it, and makes later ones wait.
    public static let forDeleting = CoordinatedWritingOptions(rawValue: 1 << 0)
    /// The write moves or renames the item; for a folder, it waits like ``forDeleting``.
    public static let forMoving = CoordinatedWritingOptions(rawValue: 1 << 1)
    /// The write merges changes into the item (presenters are asked to save first, in a later release).
    public static let forMerging = CoordinatedWritingOptions(rawValue: 1 << 2)
    /// The write creates or replaces the item whole; for a folder, it waits like ``forDeleting``.
    public static let forReplacing = CoordinatedWritingOptions(rawValue: 1 << 3)

    var scopesSubtree: Bool { !isDisjoint(with: [.forDeleting, .forMoving, .forReplacing]) }
}

/// One item of a coordination, and what the coordinator found when access was granted.
public struct FileAccessIntent: Sendable, Hashable {
    enum Access: Sendable, Hashable {
        case reading(CoordinatedReadingOptions)
        case writing(CoordinatedWritingOptions)
    }

    let access: Access
    /// The item's URL: as given, and, inside the accessor, as resolved when access was granted.
    public internal(set) var url: URL
    /// Whether the item existed when the coordination started and was gone when access was
    /// granted (someone deleted it, or moved it out of its folder without coordinating, while this
    /// coordination waited). Nothing the coordinator does re-creates it.
    public internal(set) var itemWasDeletedWhileWaiting = false

    /// An intent to read the item at `url`.
    public static func readingIntent(with url: URL, options: CoordinatedReadingOptions = []) -> FileAccessIntent {
        FileAccessIntent(access: .reading(options), url: url)
    }

    /// An intent to write the item at `url`.
    public static func writingIntent(with url: URL, options: CoordinatedWritingOptions = []) -> FileAccessIntent {
        FileAccessIntent(access: .writing(options), url: url)
    }

    /// Whether this intent writes.
    public var isWriting: Bool {
        if case .writing = access { return true }
        return false
    }
}
