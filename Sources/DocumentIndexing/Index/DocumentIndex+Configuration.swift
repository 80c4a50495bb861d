import DocumentKitSystem
import Foundation

extension DocumentIndex {
    /// What an index lists and where it keeps itself.
    public struct Configuration: Sendable {
        /// The library: the folder tree whose documents are listed.
        public var folderURL: URL
        /// Documents are packages (folders) with these extensions, such as `note`; the index does
        /// not descend into them.
        public var packageExtensions: Set<String>
        /// The manifest member of a package, such as `Info.json`.
        public var manifestName: String
        /// The format documents must have; a document of another format is ``IndexEntry/State/damaged(_:)``.
        /// Nil accepts every format.
        public var formatIdentifier: String?
        /// The newest format version the app reads; a document whose manifest needs a newer
        /// reader is ``IndexEntry/State/tooNew(_:)``. Nil accepts every version.
        public var readerVersion: Int?
        /// The manifest field that is the app's key (a note's `title`), for ``DocumentIndex/entries(forKey:)``.
        public var keyField: String?
        /// The manifest fields each entry keeps, such as `["title", "created", "tags"]`.
        public var fields: [String]
        /// The folder the persisted index is kept in; nil for the user's cache folder
        /// (`$XDG_CACHE_HOME/DocumentKit/indexes`, else `~/.cache/DocumentKit/indexes`).
        public var cacheFolder: URL?
        /// Whether the index is kept on disk between processes. An index that isn't is built by
        /// a full scan in each process.
        public var isPersistent: Bool
        /// The system-call seam every file operation goes through (tests inject failures).
        public var fileSystem: FileSystem
        /// At most this many package folders are watched besides the library's folders; past it,
        /// packages are checked by the periodic stat sweep only (see ``sweepInterval``).
        public var packageWatchBudget: Int
        /// How often a live index checks every entry's stamps anyway, for what no watch reported.
        public var sweepInterval: Duration

        /// An index of the packages with `packageExtensions` under `folderURL`.
        public init(
            folderURL: URL, packageExtensions: Set<String>, manifestName: String = "Info.json",
            formatIdentifier: String? = nil, readerVersion: Int? = nil, keyField: String? = nil, fields: [String] = [],
            cacheFolder: URL? = nil, isPersistent: Bool = true, fileSystem: FileSystem = .live,
            packageWatchBudget: Int = 4096, sweepInterval: Duration = .seconds(5)
        ) {
            self.folderURL = folderURL.standardizedFileURL
            self.packageExtensions = packageExtensions
            self.manifestName = manifestName
            self.formatIdentifier = formatIdentifier
            self.readerVersion = readerVersion
            self.keyField = keyField
            self.fields = fields
            self.cacheFolder = cacheFolder
            self.isPersistent = isPersistent
            self.fileSystem = fileSystem
            self.packageWatchBudget = packageWatchBudget
            self.sweepInterval = sweepInterval
        }
    }
}
