extension FileVersion {
    /// How a version came to be.
    public enum Origin: String, Sendable, Hashable, CaseIterable, Codable {
        /// Kept by a save, which replaced it.
        case save
        /// Kept by an autosave, which replaced it.
        case autosave
        /// Kept because two writers conflicted: a save found the item changed since the
        /// version it was based on.
        case conflict
        /// The contents another program left on disk, kept before they were replaced.
        case externalChange
        /// A conflict copy a sync engine made beside the item, adopted into the store.
        case adoptedCopy
        /// Added by the app from other contents (``VersionStore/addVersion(ofItemAt:withContentsOf:origin:isConflict:byMoving:ancestorIdentifier:)``).
        case added
    }
}
