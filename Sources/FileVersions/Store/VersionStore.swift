import DocumentKitSystem
import FileCoordination
import FilePackages
import Foundation
import Logging

/// Where an item's other versions and conflict versions are kept: a hidden folder,
/// ``folderName``, in the folder of a library of documents, as `NSFileVersion` keeps them on
/// Apple platforms. Its layout is the on-disk format `Formats/version-store/v1`.
///
/// Versions belong to a document, not to a path: a package with a manifest is known by the
/// manifest's document identifier, so it keeps its versions when it is renamed or moved inside
/// the library. A document without one is known by its path relative to the library.
///
/// Kept versions never change: a version's files never share an inode with the document or
/// any file outside the store, so no write to the document (in place or not) reaches them.
/// Versions of a package share the files they have in common *with each other* by hard link:
/// keeping 100 versions of a 10,000-file package in which one file changes per save costs
/// about 100 files and 100 folder trees of links. A save keeps the version it replaces complete
/// in the store before it replaces it, or fails.
///
/// Every operation is atomic (a version appears whole or not at all) and runs under a
/// coordinated read or write of the item when the store has a coordinator. A damaged store (a
/// missing or malformed record, a version whose files are gone) is reported in
/// ``VersionListing/problems`` and skipped; it never stops anything from opening and never
/// touches the current item.
public final class VersionStore: Sendable {
    /// The store's folder name inside a library folder.
    public static let folderName = TreeRoot.versionStoreFolderName

    /// The library folder that holds the store.
    public let libraryURL: URL
    /// The store's own folder, ``folderName`` inside ``libraryURL``.
    public let url: URL
    /// `documents/` in the store (one folder per document), made once: a save and a count use it
    /// several times.
    let documentsURL: URL
    /// `store.json`, the store's description, read (from the file cache) by every operation.
    let descriptionURL: URL
    /// `locks/` in the store (one lock file per document folder), used at every save.
    let locksURL: URL
    /// The coordinator every operation goes through, or nil to work without coordinating.
    public let coordinator: FileCoordinator?
    /// The manifest member of packages that have one: its document identifier names the document.
    public let manifestName: String
    /// Which old versions are kept (unresolved conflicts always are).
    public let pruning: PruningSchedule
    /// How durable the store's writes are.
    public let durability: Durability
    /// Recorded as the computer that made the versions this process adds.
    public let savingComputerName: String
    /// Recorded as the user who made the versions this process adds.
    public let savingUser: String?
    /// The system-call seam every operation of the store goes through.
    public let fileSystem: FileSystem
    /// `store.json` and the records as this store last decoded them, by file identity.
    let fileCache = StoreFileCache()
    /// The sync engines the library lives under: only their conflict copies are adopted (see
    /// ``ConflictCopyName/init(parsing:isFolder:engines:originalIsFolder:)``). All known engines by default.
    public let syncEngines: Set<ConflictCopyName.Engine>
    /// When a save that keeps the package it replaces by exchange finishes keeping it.
    public let versionCompletion: VersionCompletion
    /// Which stored files hold the bytes of which live files (see ``SharingCache``).
    let sharing = SharingCache()
    /// Which versions of each document folder are unresolved conflicts, by record identity.
    let conflictTally = ConflictTally()
    /// The versions of the document folders whose names ``WatchedFolderNames`` keeps, for saves.
    let folderSummaries = FolderSummaries()
    /// Whether the store's file system gives a folder a new change time at every change.
    let exactChangeTimes = ExactChangeTimes()
    /// How long an entry of a store whose entries never change (format 3), found whole, is taken
    /// as it was without a look at its files; then it is looked at again once (an entry damaged
    /// in place, by hand or a sync engine, is seen within this time): a conflict count `stat`s
    /// the entry's folder and record, and reads the record only where one of them changed. The
    /// horizons are shared spans of the clock: every entry is looked at again at their turn.
    let trustHorizon: Duration
    /// ``trustHorizon`` by default.
    package static let defaultTrustHorizon: Duration = .seconds(5)

    static let logger = Logger(label: "DocumentKit.VersionStore")

    /// The store of the library folder `libraryURL` (created on first use); `fileSystem` is the
    /// seam its system calls go through (tests inject failures); `syncEngines`, the sync engines
    /// whose conflict copies the library adopts; `versionCompletion`, when a save by exchange
    /// finishes keeping the package it replaced (a server answers sooner with
    /// ``VersionCompletion/afterSaveReturns``).
    public convenience init(
        libraryURL: URL, coordinator: FileCoordinator? = nil, manifestName: String = "Info.json",
        pruning: PruningSchedule = .standard, durability: Durability = .durable, fileSystem: FileSystem = .live,
        syncEngines: Set<ConflictCopyName.Engine> = ConflictCopyName.Engine.all,
        versionCompletion: VersionCompletion = .beforeSaveReturns
    ) {
        self.init(
            libraryURL: libraryURL, coordinator: coordinator, manifestName: manifestName, pruning: pruning, durability: durability,
            fileSystem: fileSystem, syncEngines: syncEngines, trustHorizon: VersionStore.defaultTrustHorizon,
            versionCompletion: versionCompletion)
    }

    /// As the public initializer; `trustHorizon` is how long an entry found whole is taken as
    /// it was without a look (see ``trustHorizon``; zero: never, for tests of damaged stores).
    package init(
        libraryURL: URL, coordinator: FileCoordinator? = nil, manifestName: String = "Info.json",
        pruning: PruningSchedule = .standard, durability: Durability = .durable, fileSystem: FileSystem = .live,
        syncEngines: Set<ConflictCopyName.Engine> = ConflictCopyName.Engine.all, trustHorizon: Duration,
        versionCompletion: VersionCompletion = .beforeSaveReturns
    ) {
        self.trustHorizon = trustHorizon
        self.versionCompletion = versionCompletion
        self.fileSystem = fileSystem
        self.syncEngines = syncEngines
        self.libraryURL = libraryURL.standardizedFileURL
        self.url = self.libraryURL.appendingPathComponent(Self.folderName, isDirectory: true)
        self.documentsURL = self.url.appendingPathComponent("documents", isDirectory: true)
        self.descriptionURL = self.url.appendingPathComponent("store.json")
        self.locksURL = self.url.appendingPathComponent("locks", isDirectory: true)
        self.coordinator = coordinator
        self.manifestName = manifestName
        self.pruning = pruning
        self.durability = durability
        self.savingComputerName = ProcessInfo.processInfo.hostName
        let user = ProcessInfo.processInfo.environment["USER"] ?? ProcessInfo.processInfo.environment["LOGNAME"]
        self.savingUser = user?.isEmpty == false ? user : nil
    }

    /// The store for the item at `itemURL`: the nearest enclosing folder that has one, else the
    /// item's own folder (where the store is created on first use).
    public static func forItem(
        at itemURL: URL, coordinator: FileCoordinator? = nil, manifestName: String = "Info.json",
        pruning: PruningSchedule = .standard
    ) -> VersionStore {
        let parent = itemURL.standardizedFileURL.deletingLastPathComponent()
        var folder = parent
        while true {
            let candidate = folder.appendingPathComponent(folderName, isDirectory: true).path
            if let status = try? FileSystem.live.status(of: candidate, in: AT_FDCWD, followingLink: true), status.kind == .directory {
                return VersionStore(libraryURL: folder, coordinator: coordinator, manifestName: manifestName, pruning: pruning)
            }
            let up = folder.deletingLastPathComponent()
            if up.path == folder.path || folder.path == "/" { break }
            folder = up
        }
        return VersionStore(libraryURL: parent, coordinator: coordinator, manifestName: manifestName, pruning: pruning)
    }

    // MARK: Coordination

    func coordinated<T>(reading url: URL, _ work: () throws(DocumentKitError) -> T) throws(DocumentKitError) -> T {
        try coordinated(url, writing: false, work)
    }

    func coordinated<T>(writing url: URL, _ work: () throws(DocumentKitError) -> T) throws(DocumentKitError) -> T {
        try coordinated(url, writing: true, work)
    }

    private func coordinated<T>(_ url: URL, writing: Bool, _ work: () throws(DocumentKitError) -> T) throws(DocumentKitError) -> T {
        guard let coordinator else { return try work() }
        do {
            if writing { return try coordinator.coordinate(writingItemAt: url) { _ in try work() } }
            return try coordinator.coordinate(readingItemAt: url) { _ in try work() }
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw DocumentKitError(.other, operation: writing ? .save : .read, path: url.path, detail: "\(error)")
        }
    }
}
