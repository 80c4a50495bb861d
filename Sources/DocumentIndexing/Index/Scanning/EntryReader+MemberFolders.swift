#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FormatVersioning

extension EntryReader {
    /// The stamps of the subfolders of the open package `folder` that hold members `manifest`
    /// lists; nil when it lists none in a subfolder. Taken before the members are looked at, so
    /// that a change after the look shows as a changed stamp.
    func memberFolderStamps(of manifest: DocumentManifest, in folder: CInt) -> MemberFolderStamps? {
        guard let members = manifest.members else { return nil }
        let paths = MemberFolderStamps.folders(holding: members.keys)
        guard !paths.isEmpty else { return nil }
        return MemberFolderStamps(paths: paths, stamps: paths.map { path in
            (try? fileSystem.status(of: path, in: folder)).map(FileStamp.init) ?? .none
        })
    }

    /// Whether the member subfolders of `record`'s package still have the stamps it was read
    /// with: true when it has none, false when they are not known. Relative to the open library
    /// folder `library` (nil: by absolute path).
    func memberFoldersUnchanged(_ record: EntryRecord, in library: Descriptor?) -> Bool {
        guard let folders = record.memberFolders else { return true }
        guard !folders.isUnknown else { return false }
        for (path, stamp) in zip(folders.paths, folders.stamps) {
            let relative = record.relativePath + "/" + path
            let status =
                if let library { try? fileSystem.status(of: relative, in: library.rawValue) } else {
                    try? fileSystem.status(of: absolutePath(relative), in: AT_FDCWD)
                }
            if (status.map(FileStamp.init) ?? .none) != stamp { return false }
        }
        return true
    }
}
