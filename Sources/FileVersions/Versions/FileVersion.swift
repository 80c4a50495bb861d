import Foundation

/// A saved state of an item: its current version, an older one, or a conflict version, as
/// `NSFileVersion` on Apple platforms.
public struct FileVersion: Sendable, Hashable {
}
