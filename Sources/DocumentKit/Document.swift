import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization

/// A document on disk, a file or a package, that an app subclasses.
///
/// `Content` is a value type the app defines: the document owns the current value, and every
/// change goes through ``update(as:_:)-5rxph``, which counts it. A save takes a snapshot of the value
/// (free, since it is a value) and writes it in the background while edits go on; edits made
/// during a save keep the document dirty after it.
///
/// Subclasses override behaviour, not storage:
/// - ``read(from:)`` turns the file tree read from disk into `Content`;
/// - ``fileWrapper(for:replacing:)`` turns `Content` into the tree to write;
/// - ``format``, for a package that describes itself in a manifest: the document then applies
///   the format's rules when it opens (an older file is migrated in memory, a newer one opens
///   read-write, read-only or not at all, an incomplete package is refused) and writes the
///   manifest, with a record of every member, at every save. The subclass reads and writes the
///   format's own manifest fields in ``read(from:manifest:)`` and
///   ``fileWrapper(for:manifest:replacing:)``. See <doc:FormatVersioning>.
///
/// ```swift
/// struct Note: Sendable { var title: String; var body: String }
///
/// final class NoteDocument: Document<Note>, @unchecked Sendable {
///     override func read(from tree: FileWrapper) throws -> Note {
///         let body = try tree["body.md"]?.regularFileContents ?? Data()
///         return Note(title: "…", body: String(decoding: body, as: UTF8.self))
///     }
///     override func fileWrapper(for note: Note, replacing previous: FileWrapper?) throws -> FileWrapper {
///         var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
///         tree["body.md"] = FileWrapper(regularFileWithContents: Data(note.body.utf8))
///         return tree
///     }
/// }
///
/// let document = try await NoteDocument.open(at: url)
/// try document.update { $0.body += "\nOne more line" }
/// try await document.save()
/// ```
///
/// ## Concurrency
/// A document may be used from any number of tasks. Its state (content, change count, the tree
/// last read or written) sits behind a lock and is only touched for as long as it takes to copy a
/// value. Reads and writes of the file run one at a time, in order, on the document's own serial
/// lane of a few I/O threads all documents share (see <doc:LongRunningProcesses>), never on the
/// caller's thread and never under the lock. The subclass's overrides are called there, with values.
///
/// > Important: The compiler can't check a subclass: Swift checks `Sendable` only for final
/// > classes without a superclass, so every subclass must restate `@unchecked Sendable`, and
/// > that turns the checking of *its own* stored properties off. The rule it must keep: every
/// > stored property is a `let` of a `Sendable` type. Keep the document's data in `Content`;
/// > anything else that changes goes into a `Mutex`, through which the compiler checks every access:
/// >
/// > ```swift
/// > final class NoteDocument: Document<Note>, @unchecked Sendable {
/// >     let readerVersion: Int                       // immutable: fine
/// >     let openCount = Mutex(0)                     // mutable, behind a lock: fine
/// >     // var lastTitle = ""                        // a data race the compiler won't report
/// > }
/// > ```
/// >
/// > See <doc:DocumentConcurrency>.
open class Document<Content: Sendable>: @unchecked Sendable {
    /// Where the document lives. A document reached through a symbolic link is read from and
    /// saved at the link's target; the link stays. It changes with ``save(to:for:)`` as
    /// ``SaveOperation/saveAs``, and when another program moves the file.
    public var fileURL: URL { location.withLock { $0 } }

    /// How the document is saved. The default is atomic and durable.
    public let saveOptions: SaveOptions

    /// The coordinator every read and save of the document goes through, or nil to read and
    /// save without coordinating with other threads and processes.
    public let coordinator: FileCoordinator?

    struct State {
        var content: Content?
        /// The id of the content's state (see `count(_:in:)`), and the saved state's.
        var changeCount = 0
        var savedChangeCount = 0
        /// The last id given, and the ids an undo and a redo go back to.
        var lastID = 0
        var earlierIDs: [Int] = []
        var undoneIDs: [Int] = []
        var tree: FileWrapper?
        var documentState: DocumentState = .closed
        var lastSaveError: DocumentKitError?
        /// The manifest in memory (migrated, or as last saved); nil without a format, or before
        /// a new document's first save.
        var manifest: DocumentManifest?
        var formatStatus: FormatStatus?
        /// Why the document may not be changed, when it is read-only.
        var readOnlyMessage: String?
        /// Knows the digests of the members last checked or saved; used on the I/O queue only.
        var hasher = MemberHasher()
        /// Where saves keep the versions they replace, and conflicting ones.
        var versionStore: VersionStore?
        /// The item's state on disk as last read or saved: the version a save is based on, and
        /// what tells the document's own state from a change on disk (see ``/FileVersions/ItemState``: its
        /// digest, with a version store, tells a real change from a change of metadata only; its
        /// members, for a presenting document, catch a member written in place).
        var base: ItemState?
        var lastConflictVersion: FileVersion?
        var packageSettlePeriod = PackageVerification.defaultSettlePeriod
        var memberDigestCache: (any MemberDigestCache)? = PersistentMemberDigestCache.shared
        var identityLookup: (any DocumentIdentityLookup)?
        /// Whether the first save in place looked for another live item with the document's identifier.
        var checkedIdentity = false
        /// The identifier this document was given instead of the one of the document it is a
        /// copy of (old, new): every later save writes the new one (see `Document+Identity.swift`).
        var ownIdentity: DocumentIdentityChange?
    }

    let state: Mutex<State>
    /// Serialises every read and write of the document's file, on the shared I/O threads.
    let io: DocumentIOLane
    /// ``fileURL``, apart from `state` so that it can be read while `state` is held.
    let location: Mutex<URL>
    /// Event subscribers and autosave's bookkeeping, apart from `state`: events are delivered
    /// without holding it.
    let lifecycle: Mutex<Lifecycle>

    /// The document's undo stack, as `NSDocument.undoManager`: registering an undo marks the
    /// document edited, undoing and redoing count as `NSDocument` counts them (see
    /// ``DocumentUndoManager``).
    public let undoManager = DocumentUndoManager()

    /// A document for the item at `fileURL`, not yet read: call ``open()``.
    public required init(fileURL: URL, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil) {
        self.location = Mutex(fileURL)
        self.saveOptions = saveOptions
        self.coordinator = coordinator
        self.state = Mutex(State())
        self.io = DocumentIOLane()
        self.lifecycle = Mutex(Lifecycle())
        attachUndoManager()
    }

    /// A new document with `content`, not yet saved: it has unsaved changes until ``save()``.
    public init(
        fileURL: URL, content: Content, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil
    ) {
        self.location = Mutex(fileURL)
        self.saveOptions = saveOptions
        self.coordinator = coordinator
        self.state = Mutex(State(content: content, changeCount: 1, lastID: 1, earlierIDs: [0], documentState: .normal))
        self.io = DocumentIOLane()
        self.lifecycle = Mutex(Lifecycle())
        attachUndoManager()
        scheduleAutosave()
    }

    /// Opens the document at `url`: reads it and returns it ready for use.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` naming the file: it is missing or unreadable (the system's
    ///   error), or its contents are malformed (`corruptData`, with the subclass's error as
    ///   ``/DocumentKitSystem/DocumentKitError/underlyingError``).
    public class func open(
        at url: URL, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil
    ) async throws(DocumentKitError) -> Self {
        let document = Self(fileURL: url, saveOptions: saveOptions, coordinator: coordinator)
        try await document.open()
        return document
    }

    // MARK: Override points

    /// Turns the tree read from disk into content. Override it; the default traps.
    ///
    /// Throw any error for malformed contents: the document reports it as `corruptData`
    /// naming the file, and keeps what it had.
    open func read(from fileWrapper: FileWrapper) throws -> Content {
        fatalError("\(type(of: self)) must override read(from:)")
    }

    /// Turns content into the tree to save. Override it; the default traps.
    ///
    /// - Parameters:
    ///   - content: The content to save: a snapshot of ``content``.
    ///   - previous: The tree as last read or saved (nil for a new document). Members taken over
    ///     from it unchanged are hard-linked by the save, not copied.
    open func fileWrapper(for content: Content, replacing previous: FileWrapper?) throws -> FileWrapper {
        fatalError("\(type(of: self)) must override fileWrapper(for:replacing:)")
    }

    /// The format of the document's manifest, or nil (the default) for a document without one.
    ///
    /// With a format, the document is a package holding its manifest as the member
    /// ``/FormatVersioning/FormatDescription/manifestName``. Opening it applies the format's rules (see
    /// ``/FormatVersioning/FormatDescription/compatibility(of:at:)``); ``formatStatus`` says what the open found.
    /// Every save writes the manifest, last, with the ``writer`` and a record (size, SHA-256) of
    /// every member, keeping what this app doesn't understand byte for byte.
    ///
    /// Override it with a computed property; it must give the same description every time.
    open var format: FormatDescription? { nil }

    /// The archive (only `.zip`) a document of this class is stored as, one file holding its
    /// package tree; nil (the default) stores the tree as it is. See <doc:ExportingAndImporting>.
    open var archiveFormat: ArchiveFormat? { nil }

    /// The app named as the writer in the manifest of every save (with a ``format``). The
    /// default is the process's name and the version `unknown`: override it with your app's.
    open var writer: DocumentManifest.Writer {
        DocumentManifest.Writer(name: ProcessInfo.processInfo.processName, version: "unknown")
    }

    /// Turns the tree and its manifest into content, for a document with a ``format``: the
    /// manifest holds the format's own fields (``/FormatVersioning/DocumentManifest/additionalFields``). For an
    /// older document, both are migrated already. The default calls ``read(from:)``.
    ///
    /// Throw any error for malformed contents: the document reports it as `corruptData`
    /// naming the file, and keeps what it had.
    open func read(from fileWrapper: FileWrapper, manifest: DocumentManifest) throws -> Content {
        try read(from: fileWrapper)
    }

    /// Turns content into the tree to save and sets the format's own fields in `manifest`, for a
    /// document with a ``format``. The default calls ``fileWrapper(for:replacing:)``.
    ///
    /// Change only the fields your format defines: the rest of the manifest (versions, features,
    /// fields a newer version added) is written back as it was read. The document then records
    /// the writer and the members and puts the manifest into the tree; a manifest member the tree
    /// holds is replaced.
    ///
    /// - Parameters:
    ///   - content: The content to save: a snapshot of ``content``.
    ///   - manifest: The manifest as read (and migrated) or last saved; for a new document, the
    ///     format's ``/FormatVersioning/FormatDescription/makeManifest(writer:documentIdentifier:)``.
    ///   - previous: The tree as last read (and migrated) or saved; build on it, so that members
    ///     this version doesn't know survive.
    open func fileWrapper(
        for content: Content, manifest: inout DocumentManifest, replacing previous: FileWrapper?
    ) throws -> FileWrapper {
        try fileWrapper(for: content, replacing: previous)
    }

    /// Merges a conflict version into the current content, for
    /// ``resolveConflict(_:by:)`` with ``ConflictResolution/merge``. Override it; the default
    /// throws (the document type doesn't merge).
    ///
    /// - Parameters:
    ///   - current: The document's content now.
    ///   - other: The conflict version's content.
    ///   - ancestor: The content both descend from, when the version store knows it (nil: merge
    ///     two ways, keeping what differs from both sides).
    /// - Returns: The merged content, which the document then saves.
    open func merge(_ current: Content, with other: Content, ancestor: Content?) throws -> Content {
        throw DocumentKitError(
            .invalidArgument, operation: .save, path: fileURL.path, originalIsIntact: true,
            detail: "\(type(of: self)) doesn't merge conflict versions: override merge(_:with:ancestor:).")
    }

    /// Where the document autosaves elsewhere (``SaveOperation/autosaveElsewhere``): its drafts,
    /// the recovery data ``recoverable(in:using:)`` lists (format: `Formats/drafts/v1/SPEC.md`). A
    /// document that has no file yet autosaves there, and so does one whose
    /// ``AutosavePolicy/autosavesInPlace`` is false. The default is the class's
    /// ``defaultAutosaveDraftsFolder``.
    open var autosaveDraftsFolder: URL { Self.defaultAutosaveDraftsFolder }

    /// The drafts folder of the class's documents, and where ``recoverable(in:using:)`` looks by
    /// default, unless the subclass says otherwise: `$XDG_STATE_HOME/DocumentKit/drafts`, else
    /// `~/.local/state/DocumentKit/drafts` when the home folder is the user's, else
    /// `$TMPDIR/DocumentKit-drafts-<uid>` (`/tmp` without `TMPDIR`).
    ///
    /// Whichever folder is used (this one or an override) is created with mode `0700` and must be
    /// the user's alone: a folder another user owns or may write is refused (the autosave fails
    /// with `untrustedFolder`, naming it), and one the user owns that others may read is made
    /// `0700`.
    open class var defaultAutosaveDraftsFolder: URL {
        URL(fileURLWithPath: Self.defaultDraftsPath(ProcessInfo.processInfo.environment), isDirectory: true)
    }

    /// The default drafts folder for `environment` (see ``defaultAutosaveDraftsFolder``).
    static func defaultDraftsPath(_ environment: [String: String]) -> String {
        if let state = UserFolders.stateDirectory(environment) { return state + "/DocumentKit/drafts" }
        return UserFolders.perUserTemporaryFolder("DocumentKit-drafts", environment)
    }

    // MARK: Content and changes

    /// The current content. Reading it before the document is open is a programming error.
    public var content: Content {
        state.withLock { state in
            guard let content = state.content else { preconditionFailure("Document \(fileURL.path) is not open") }
            return content
        }
    }

    /// Changes the content and counts the change (`kind`: ``DocumentChange/undone`` when the
    /// change undoes one, and so on), which schedules an autosave. Called by a handler of the
    /// document's ``undoManager`` while it undoes or redoes, it counts nothing: the undo or redo
    /// is counted.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `readOnlyDocument` if the document may be read
    ///   but not changed (``formatStatus`` says why); the content is then left as it is.
    @discardableResult
    public func update<Result>(as kind: DocumentChange = .done, _ change: (inout Content) -> Result) throws(DocumentKitError) -> Result {
        let counts = countsChanges
        let result = try state.withLock { state throws(DocumentKitError) in
            try Self.checkEditable(state, path: fileURL.path)
            let result = change(&state.content!)
            if counts { Self.count(kind, in: &state) }
            return result
        }
        didUpdate(counted: counts)
        return result
    }

    /// Changes the content with a change that may fail, and counts the change, as the other `update(as:_:)` does.
    ///
    /// - Throws: The change's error, or ``/DocumentKitSystem/DocumentKitError`` with code `readOnlyDocument` if
    ///   the document may be read but not changed.
    @discardableResult
    public func update<Result>(as kind: DocumentChange = .done, _ change: (inout Content) throws -> Result) throws -> Result {
        let counts = countsChanges
        let result = try state.withLock { state in
            try Self.checkEditable(state, path: fileURL.path)
            let result = try change(&state.content!)
            if counts { Self.count(kind, in: &state) }
            return result
        }
        didUpdate(counted: counts)
        return result
    }

    private static func checkEditable(_ state: State, path: String) throws(DocumentKitError) {
        guard state.content != nil else { preconditionFailure("Document \(path) is not open") }
        if let message = state.readOnlyMessage {
            throw DocumentKitError(
                .readOnlyDocument, operation: .edit, path: path, originalIsIntact: true, detail: message)
        }
    }

    /// Where the document's saves keep what they replace (origin ``/FileVersions/FileVersion/Origin/save``),
    /// and the contents another process saved since this document read them (an unresolved
    /// conflict version); nil (the default) keeps nothing, and such a save then fails with
    /// `changedSinceRead` instead of overwriting. Set it before ``open()`` or the first save.
    public var versionStore: VersionStore? {
        get { state.withLock { $0.versionStore } }
        set { state.withLock { $0.versionStore = newValue } }
    }

    /// How long nothing in the document's package must have changed before members that don't
    /// match its manifest count as edited by another program (``open()`` fails with
    /// `modifiedPackage`; ``acceptMembersOnDisk()`` accepts them) rather than being delivered by a
    /// sync (`incompletePackage`: wait). The default is ``/FormatVersioning/PackageVerification/defaultSettlePeriod``.
    public var packageSettlePeriod: Duration {
        get { state.withLock { $0.packageSettlePeriod } }
        set { state.withLock { $0.packageSettlePeriod = newValue } }
    }

    /// Where opening the document looks up the digests of package members it checked before,
    /// in this process or another: a member whose file is unchanged (same device, inode, size,
    /// modification and change times) and older than its digest is not read again. The default
    /// is the user's cache (``/DocumentIndexing/PersistentMemberDigestCache/shared``); nil
    /// hashes every member at each open. See <doc:FormatVersioning>.
    public var memberDigestCache: (any MemberDigestCache)? {
        get { state.withLock { $0.memberDigestCache } }
        set { state.withLock { $0.memberDigestCache = newValue } }
    }

    /// Where the first save in place looks for other items holding the document's identifier
    /// when its version store has no history of it yet (is this document a copy?): a library's
    /// ``/DocumentIndexing/DocumentIndex/identityLookup()``. Nil (the default) lists the folder and
    /// reads the manifest of every sibling of the same kind: linear in the folder's size.
    public var identityLookup: (any DocumentIdentityLookup)? {
        get { state.withLock { $0.identityLookup } }
        set { state.withLock { $0.identityLookup = newValue } }
    }
}
