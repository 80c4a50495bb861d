import Foundation

/// A fresh folder for one test, removed when the value is deinitialised... or by `remove()`.
public final class TemporaryDirectory: Sendable {
    /// The folder's URL.
    public let url: URL

    /// Creates a new folder under the system's temporary folder (or `parent`).
    public init(prefix: String = "documentkit", in parent: URL? = nil) throws {
        let base = parent ?? URL(fileURLWithPath: NSTemporaryDirectory())
        let url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.url = url.resolvingSymlinksInPath()
    }

    /// A URL for `name` inside the folder.
    public func appending(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the folder (hidden ones included), sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
