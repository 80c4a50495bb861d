extension VersionStore {
    /// The name of the folder under the store's `documents/` that holds the versions of the
    /// document with the manifest identifier `identifier` (for the library index's cheap check).
    package static func documentFolderName(forIdentifier identifier: String) -> String {
        key(forIdentifier: identifier).folderName
    }
}
