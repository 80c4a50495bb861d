import DocumentKitSystem
import Foundation

/// Adding and removing a directory's children the way `FileWrapper` does on Apple platforms.
extension FileWrapper {
    /// Adds `child` to this directory under its ``preferredFilename`` and returns the name used:
    /// the preferred one if it is free, else the first free one of `name 2.ext`, `name 3.ext`…
    /// (Apple's `FileWrapper` makes up a name of its own in that case).
    ///
    /// A wrapper that is not a directory, or a child without a preferred file name, is a
    /// programming error, as on Apple platforms.
    @discardableResult
    public mutating func addFileWrapper(_ child: FileWrapper) -> String {
        guard let preferred = child.preferredFilename, !preferred.isEmpty else {
            preconditionFailure("FileWrapper.addFileWrapper(_:): the child has no preferredFilename")
        }
        let name = unusedName(preferring: preferred)
        var child = child
        child.preferredFilename = name
        self[name] = child
        return name
    }

    /// Adds a regular file with `contents` to this directory, named `fileName` or, if that name
    /// is taken, as ``addFileWrapper(_:)`` says; returns the name used.
    @discardableResult
    public mutating func addRegularFile(withContents contents: Data, preferredFilename fileName: String) -> String {
        var child = FileWrapper(regularFileWithContents: contents)
        child.preferredFilename = fileName
        return addFileWrapper(child)
    }

    /// Removes `child` from this directory: the child filed under its ``preferredFilename`` if
    /// that one is equal to it, else the first equal child in name order. Nothing happens if no
    /// child is equal to it.
    public mutating func removeFileWrapper(_ child: FileWrapper) {
        guard let children = fileWrappers else {
            preconditionFailure("FileWrapper.removeFileWrapper(_:): only a directory has children")
        }
        if let preferred = child.preferredFilename, children[preferred] == child {
            self[preferred] = nil
        } else if let name = children.keys.sorted().first(where: { children[$0] == child }) {
            self[name] = nil
        }
    }

    /// Whether the item at `path` differs from what this wrapper was read from (or saved as), as
    /// `FileWrapper.needsToBeUpdated(fromPath:)`: a regular file that is another file or was
    /// changed (size, modification or status-change time, so a `chmod` counts), a directory whose
    /// members differ (recursively), a symbolic link with another destination. A wrapper made in
    /// memory needs an update unless the file holds the same bytes; a missing item always does.
    public func needsToBeUpdated(fromPath path: String) -> Bool {
        !matchesContents(of: URL(fileURLWithPath: path))
    }

    /// `preferred`, or `stem N.ext` for the smallest N from 2 that no child has.
    private func unusedName(preferring preferred: String) -> String {
        guard let children = fileWrappers else {
            preconditionFailure("FileWrapper: only a directory has children")
        }
        guard children[preferred] != nil else { return preferred }
        let dot = preferred.lastIndex(of: ".").flatMap { $0 == preferred.startIndex ? nil : $0 }
        let stem = dot.map { String(preferred[..<$0]) } ?? preferred
        let suffix = dot.map { String(preferred[$0...]) } ?? ""
        var number = 2
        while children["\(stem) \(number)\(suffix)"] != nil { number += 1 }
        return "\(stem) \(number)\(suffix)"
    }
}
