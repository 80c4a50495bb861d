import Dispatch
import Foundation
import Synchronization

/// A document on disk, a file or a package, that an app subclasses.
///
/// `Content` is a value type the app defines: the document owns the current value, and every
/// change goes through ``update(_:)``, which counts it. A save takes a snapshot of the value
/// (free, since it is a value) and writes it in the background while edits go on; edits made
/// during a save keep the document dirty after it.
///
/// Subclasses override behaviour, not storage:
/// - ``read(from:)`` turns the file tree read from disk into `Content`;
/// - ``fileWrapper(for:replacing:)`` turns `Content` into the tree to write.
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
/// document.update { $0.body += "\nOne more line" }
/// try await document.save()
/// ```
///
/// ## Concurrency
/// A document may be used from any number of tasks. Its state (content, change count, the tree
/// last read or written) sits behind a lock and is only touched for as long as it takes to copy a
/// value. Reads and writes of the file run one at a time, in order, on the document's own serial
/// queue, never on the caller's thread and never under the lock. The subclass's overrides are
/// called on that queue, with values: they must not keep mutable state of their own.
///
/// > Important: A subclass adds no stored mutable properties. `Document` is `@unchecked
/// > Sendable` because its state is guarded by a `Mutex` and its I/O by a serial queue; a
/// > subclass inherits that promise and must keep it (immutable `let` properties are fine).
open class Document<Content: Sendable>: @unchecked Sendable {
    /// Where the document lives. A document reached through a symbolic link is read from and
    /// saved at the link's target; the link stays.
    public let fileURL: URL

    /// How the document is saved. The default is atomic and durable.
    public let saveOptions: SaveOptions

    /// The coordinator every read and save of the document goes through, or nil to read and
    /// save without coordinating with other threads and processes.
    public let coordinator: FileCoordinator?

    private struct State {
        var content: Content?
        var changeCount = 0
        var savedChangeCount = 0
        var tree: FileWrapper?
        var documentState: DocumentState = .closed
        var lastSaveError: DocumentKitError?
    }

    private let state: Mutex<State>
    /// Serialises every read and write of the document's file.
    private let io: DispatchQueue

    /// A document for the item at `fileURL`, not yet read: call ``open()``.
    public required init(fileURL: URL, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil) {
        self.fileURL = fileURL
        self.saveOptions = saveOptions
        self.coordinator = coordinator
        self.state = Mutex(State())
        self.io = DispatchQueue(label: "DocumentKit.Document.io")
    }

    /// A new document with `content`, not yet saved: it has unsaved changes until ``save()``.
    public init(
        fileURL: URL, content: Content, saveOptions: SaveOptions = SaveOptions(), coordinator: FileCoordinator? = nil
    ) {
        self.fileURL = fileURL
        self.saveOptions = saveOptions
        self.coordinator = coordinator
        self.state = Mutex(State(content: content, changeCount: 1, documentState: .normal))
        self.io = DispatchQueue(label: "DocumentKit.Document.io")
    }

    /// Opens the document at `url`: reads it and returns it ready for use.
    ///
    /// - Throws: ``DocumentKitError`` naming the file: it is missing or unreadable (the system's
    ///   error), or its contents are malformed (`corruptData`, with the subclass's error as
    ///   ``DocumentKitError/underlyingError``).
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
    /// - Parameter previous: The tree as last read or saved (nil for a new document). Members
    ///   taken over from it unchanged are hard-linked by the save, not copied.
    open func fileWrapper(for content: Content, replacing previous: FileWrapper?) throws -> FileWrapper {
        fatalError("\(type(of: self)) must override fileWrapper(for:replacing:)")
    }

    // MARK: Content and changes

    /// The current content. Reading it before the document is open is a programming error.
    public var content: Content {
        state.withLock { state in
            guard let content = state.content else { preconditionFailure("Document \(fileURL.path) is not open") }
            return content
        }
    }

    /// Changes the content and counts the change.
    @discardableResult
    public func update<Result>(_ change: (inout Content) throws -> Result) rethrows -> Result {
        try state.withLock { state in
            guard state.content != nil else { preconditionFailure("Document \(fileURL.path) is not open") }
            let result = try change(&state.content!)
            state.changeCount += 1
            return result
        }
    }

    /// Whether there are changes that no save has written yet.
    public var hasUnsavedChanges: Bool { state.withLock { $0.changeCount != $0.savedChangeCount } }

    /// The document's state: closed, in error after a failed save, ...
    public var documentState: DocumentState { state.withLock { $0.documentState } }

    /// The error of the last save, if it failed; nil after a successful one.
    public var lastSaveError: DocumentKitError? { state.withLock { $0.lastSaveError } }

    /// The tree as last read or saved.
    public var fileWrapper: FileWrapper? { state.withLock { $0.tree } }

    // MARK: Reading and writing

    /// Reads the document from disk, replacing what is in memory.
    public func open() async throws(DocumentKitError) {
        let url = fileURL
        let (tree, content) = try await perform { () throws(DocumentKitError) in
            try self.coordinated(writing: false) { () throws(DocumentKitError) in
                let tree = try FileWrapper(contentsOf: url)
                let content: Content
                do { content = try self.read(from: tree) } catch {
                    throw Self.wrap(error, operation: .open, path: url.path)
                }
                return (tree, content)
            }
        }
        state.withLock { state in
            state.content = content
            state.tree = tree
            state.changeCount = 0
            state.savedChangeCount = 0
            state.documentState = .normal
            state.lastSaveError = nil
        }
    }

    /// Saves the current content atomically (see ``FileWrapper/write(to:options:)``).
    ///
    /// Edits made while the save runs stay unsaved changes. A failed save leaves the file on
    /// disk as it was and the edits in memory; ``documentState`` then contains `savingError`.
    public func save() async throws(DocumentKitError) {
        let url = fileURL
        let options = saveOptions
        let snapshot = state.withLock { state -> (Content?, Int, FileWrapper?, Bool) in
            (state.content, state.changeCount, state.tree, state.documentState.contains(.closed))
        }
        guard let content = snapshot.0, !snapshot.3 else {
            throw DocumentKitError(.invalidArgument, operation: .save, path: url.path, detail: "The document is not open.")
        }
        do {
            let saved = try await perform { () throws(DocumentKitError) in
                let tree: FileWrapper
                do { tree = try self.fileWrapper(for: content, replacing: snapshot.2) } catch {
                    throw Self.wrap(error, operation: .save, path: url.path)
                }
                return try self.coordinated(writing: true) { () throws(DocumentKitError) in
                    try tree.write(to: url, options: options)
                }
            }
            state.withLock { state in
                state.tree = saved
                state.savedChangeCount = snapshot.1
                state.documentState.remove(.savingError)
                state.lastSaveError = nil
            }
        } catch {
            state.withLock { state in
                state.documentState.insert(.savingError)
                state.lastSaveError = error
            }
            throw error
        }
    }

    /// Closes the document: saves unsaved changes first (unless `discardingChanges`), then
    /// releases what it holds. Waits for a save that is running.
    ///
    /// - Throws: The save's error; the document then stays open with its edits.
    public func close(discardingChanges: Bool = false) async throws(DocumentKitError) {
        if !discardingChanges && hasUnsavedChanges && !documentState.contains(.closed) {
            try await save()
        }
        _ = try? await perform { () throws(DocumentKitError) in () }  // waits for running I/O
        state.withLock { state in
            state.documentState = .closed
            state.tree = nil
        }
    }

    // MARK: Internals

    /// Runs `work` on the document's I/O queue, inside the caller's coordination context (so a
    /// save from inside a coordinated write of the document runs under that write).
    private func perform<T: Sendable>(_ work: @escaping @Sendable () throws(DocumentKitError) -> T) async throws(DocumentKitError) -> T {
        let context = CoordinationContext.current
        let result: Result<T, DocumentKitError> = await withCheckedContinuation { continuation in
            io.async {
                context.run {
                    do throws(DocumentKitError) { continuation.resume(returning: .success(try work())) } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        }
        return try result.get()
    }

    /// Runs `work` under a coordinated read or write of the document, if it has a coordinator.
    private func coordinated<T>(writing: Bool, _ work: () throws(DocumentKitError) -> T) throws(DocumentKitError) -> T {
        guard let coordinator else { return try work() }
        do {
            if writing {
                return try coordinator.coordinate(writingItemAt: fileURL) { _ in try work() }
            }
            return try coordinator.coordinate(readingItemAt: fileURL) { _ in try work() }
        } catch let error as DocumentKitError {
            throw error
        } catch {
            throw Self.wrap(error, operation: writing ? .save : .open, path: fileURL.path)
        }
    }

    static func wrap(_ error: any Error, operation: DocumentKitError.Operation, path: String) -> DocumentKitError {
        if let error = error as? DocumentKitError { return error }
        return DocumentKitError(
            .corruptData, operation: operation, path: path, originalIsIntact: true,
            detail: "The contents are not valid", underlyingError: SendableDescription(error))
    }
}
