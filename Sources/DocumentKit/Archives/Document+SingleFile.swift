import DocumentArchive
import DocumentKitSystem
import FilePackages
import FileVersions
import FormatVersioning
import Foundation

/// How a document stored as one archive (``Document/archiveFormat``) reads and writes its tree.
extension Document {
    /// The tree of the item at `url`: a package's or file's as it is on disk (without the
    /// conflict copies a sync engine left inside a package, unless `keepingConflictCopies`), or
    /// the one stored in the archive.
    func readTree(at url: URL, fileSystem: FileSystem, keepingConflictCopies: Bool = false) throws(DocumentKitError) -> FileWrapper {
        let found = try FileWrapper(contentsOf: url, fileSystem: fileSystem)
        guard let archive = archiveFormat else {
            if keepingConflictCopies { return found }
            return found.withoutConflictCopies(
                manifestName: format?.manifestName, engines: versionStore?.syncEngines ?? ConflictCopyName.Engine.all)
        }
        try Self.requireSupported(archive, path: url.path)
        return try SingleFileArchive.expand(found, at: url, using: fileSystem)
    }

    /// What is written for `tree`: itself, or the archive of it.
    func storedForm(of tree: FileWrapper, path: String) throws(DocumentKitError) -> FileWrapper {
        guard let archive = archiveFormat else { return tree }
        try Self.requireSupported(archive, path: path)
        return SingleFileArchive.archive(tree, path: path)
    }

    /// After a save of an archive: the tree of the file written, its members read from it from
    /// now on, with the digests the manifest just recorded for them.
    func treeAfterSave(_ saved: FileWrapper, at url: URL, members: [String: MemberRecord]?, fileSystem: FileSystem)
        throws(DocumentKitError) -> FileWrapper
    {
        let tree = try SingleFileArchive.expand(saved, at: url, using: fileSystem)
        for (path, record) in members ?? [:] {
            if let contents = tree.fileWrapper(atPath: path)?.providedContents, contents.size == record.size {
                contents.expectedSHA256 = record.sha256
            }
        }
        return tree
    }

    static func requireSupported(_ archive: ArchiveFormat, path: String) throws(DocumentKitError) {
        guard archive == .zip else {
            throw DocumentKitError(
                .unsupportedFormat, operation: .open, path: path,
                detail: "Single-file documents are zip archives; \(archive) is for export only.")
        }
    }
}
