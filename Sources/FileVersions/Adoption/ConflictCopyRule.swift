extension ConflictCopyName {
    /// Reads the item `name` in a folder as a sync engine's conflict copy of a sibling: nil unless
    /// the name follows the exact scheme of one of `engines` and the folder holds the original as an
    /// item of the same kind (a file for a file, a folder for a folder).
    ///
    /// This is the rule by which ``VersionStore`` adopts copies and `FileWrapper.withoutConflictCopies(manifestName:engines:)`
    /// leaves them out: a file a person named `results.conflict1` beside no `results` is a file
    /// like any other.
    ///
    /// - Parameters:
    ///   - name: The item's name in the folder.
    ///   - isFolder: Whether the item is a folder.
    ///   - engines: The sync engines the folder lives under.
    ///   - originalIsFolder: For a name in the folder, whether it is a folder; nil when the folder
    ///     holds no item of that name.
    public init?(parsing name: String, isFolder: Bool, engines: Set<Engine>, originalIsFolder: (String) -> Bool?) {
        guard let copy = ConflictCopyName(parsing: name), engines.contains(copy.engine),
            let original = originalIsFolder(copy.originalName), original == isFolder
        else { return nil }
        self = copy
    }
}

extension ConflictCopyName.Engine {
    /// Every engine whose copies are known: what a library that doesn't say lives under.
    public static let all = Set(allCases)
}
