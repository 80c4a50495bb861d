#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Synchronization
import SystemPackage

/// What `draft.json` holds (format: `Formats/drafts/v1/SPEC.md`).
struct DraftInfo: Codable, Sendable, Equatable {
    static let currentFormat = 1

    var format: Int = DraftInfo.currentFormat
    /// The absolute path of the document the draft belongs to.
    var document: String
    /// `String(describing: type(of: document))`.
    var documentType: String
    /// When the draft was autosaved: ISO 8601, UTC.
    var date: String
    var ownerPID: Int32
    var host: String
    /// The name of the draft item in the entry: `draft`, plus the document's extension if any.
    var draft: String

    /// ISO 8601 in UTC with milliseconds; format styles are values, made once.
    private static let fractionalStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let wholeSecondsStyle = Date.ISO8601FormatStyle()

    static func dateString(_ date: Date) -> String { date.formatted(fractionalStyle) }

    static func date(from string: String) -> Date? {
        if let date = try? Date(string, strategy: fractionalStyle) { return date }
        return try? Date(string, strategy: wholeSecondsStyle)
    }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func decode(_ data: Data) throws -> DraftInfo {
        try JSONDecoder().decode(DraftInfo.self, from: data)
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// The names inside a draft entry.
enum DraftEntryNames {
    static let info = "draft.json"
    static let lock = "owner.lock"
    static let draftBase = "draft"

    /// `draft`, or `draft.EXT` for a document named `*.EXT`.
    static func draftName(for documentURL: URL) -> String {
        let ext = documentURL.pathExtension
        return ext.isEmpty ? draftBase : draftBase + "." + ext
    }
}

/// The draft entry a live document owns: the folder `ID/` in the drafts folder, whose
/// `owner.lock` this process holds locked (`flock`) for as long as the entry is the document's.
/// A crash releases the lock, which is how ``RecoverableDraft`` tells a leftover from a live
/// document's draft. Every system call goes through ``fileSystem``.
final class DraftEntry: Sendable {
    let folder: URL
    let draftName: String
    let fileSystem: FileSystem
    /// The descriptor holding the lock, or -1 once released.
    private let descriptor: Mutex<CInt>

    var id: String { folder.lastPathComponent }
    var draftURL: URL { folder.appendingPathComponent(draftName, isDirectory: false) }
    var infoURL: URL { folder.appendingPathComponent(DraftEntryNames.info, isDirectory: false) }

    private init(folder: URL, draftName: String, descriptor: CInt, fileSystem: FileSystem) {
        self.folder = folder
        self.draftName = draftName
        self.fileSystem = fileSystem
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// A new entry in `drafts` (created if missing): made under a hidden name, locked, then
    /// renamed to its ID, so that no one ever sees it unlocked while this process lives. A
    /// failure leaves no entry (the hidden folder is removed).
    static func create(in drafts: URL, for documentURL: URL, using fileSystem: FileSystem) throws(DocumentKitError) -> DraftEntry {
        let id = UUID().uuidString.lowercased()
        let hiddenName = ".\(id).creating"
        let hidden = drafts.appendingPathComponent(hiddenName, isDirectory: true).path
        let lockPath = hidden + "/" + DraftEntryNames.lock
        let parent = try openDraftsFolder(drafts, creating: true, operation: .save, using: fileSystem).descriptor
        do { try fileSystem.makeDirectory(hiddenName, in: parent.rawValue, mode: 0o700) } catch {
            throw DocumentKitError(error, operation: .save, path: hidden, step: "creating the draft's folder")
        }
        var fd: CInt = -1
        var path = hidden
        var step = "opening the draft's new folder"
        do throws(Errno) {
            let entry = Descriptor(owning: try fileSystem.open(hiddenName, in: parent.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW))
            (path, step) = (lockPath, "creating \(DraftEntryNames.lock)")
            fd = try fileSystem.open(DraftEntryNames.lock, in: entry.rawValue, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
            step = "locking \(DraftEntryNames.lock)"
            try fileSystem.lockExclusivelyWithoutWaiting(fd, name: lockPath)
            (path, step) = (drafts.appendingPathComponent(id).path, "renaming the new draft entry from “\(hiddenName)”")
            try fileSystem.rename(hiddenName, in: parent.rawValue, to: id, in: parent.rawValue)
        } catch {
            if fd >= 0 { try? fileSystem.close(fd, name: lockPath) }
            try? removeItem(hiddenName, in: parent.rawValue, using: fileSystem)
            throw DocumentKitError(error, operation: .save, path: path, step: step)
        }
        return DraftEntry(
            folder: drafts.appendingPathComponent(id, isDirectory: true), draftName: DraftEntryNames.draftName(for: documentURL),
            descriptor: fd, fileSystem: fileSystem)
    }

    /// Opens the drafts folder `drafts` (creating it, mode `0700`, if `creating`) and verifies it is
    /// the user's alone (``PrivateFolder``, ``PrivateFolder/Sharing/ownerOnly``): drafts are unsaved
    /// work, and a draft another user planted must never be recovered.
    ///
    /// - Throws: `untrustedFolder` naming the folder if it could be another user's; `notFound` if
    ///   it is missing and not `creating`; the system's error otherwise.
    static func openDraftsFolder(
        _ drafts: URL, creating: Bool, operation: DocumentKitError.Operation, using fileSystem: FileSystem
    ) throws(DocumentKitError) -> PrivateFolder {
        try PrivateFolder.open(
            drafts.standardizedFileURL.path, creating: creating, sharing: .ownerOnly, what: "the drafts folder",
            remedy: "Remove it if it is not yours, or set XDG_STATE_HOME to a folder of your own (drafts go in XDG_STATE_HOME/DocumentKit/drafts).",
            operation: operation, using: fileSystem)
    }

    /// Takes over the entry of a leftover draft (recovering it): locks its `owner.lock`.
    ///
    /// - Throws: `busy` when a live process holds it (it is recovering it too, say).
    static func adopt(_ draft: RecoverableDraft, using fileSystem: FileSystem) throws(DocumentKitError) -> DraftEntry {
        let fd = try lockEntry(draft.entryURL, using: fileSystem)
        return DraftEntry(folder: draft.entryURL, draftName: draft.draftURL.lastPathComponent, descriptor: fd, fileSystem: fileSystem)
    }

    /// Opens and locks the `owner.lock` of the entry at `folder` without waiting; returns the
    /// descriptor. Throws `busy` if the owner is alive.
    static func lockEntry(_ folder: URL, using fileSystem: FileSystem) throws(DocumentKitError) -> CInt {
        let lockPath = folder.appendingPathComponent(DraftEntryNames.lock).path
        let fd: CInt
        do { fd = try fileSystem.open(lockPath, in: AT_FDCWD, flags: O_RDONLY) } catch {
            throw DocumentKitError(error, operation: .recover, path: folder.path, step: "opening \(DraftEntryNames.lock)")
        }
        do { try fileSystem.lockExclusivelyWithoutWaiting(fd, name: lockPath) } catch {
            try? fileSystem.close(fd, name: lockPath)
            if error == .wouldBlock {
                throw DocumentKitError(
                    .busy, operation: .recover, path: folder.path, errno: error,
                    detail: "A live process owns this draft (it holds \(DraftEntryNames.lock)).")
            }
            throw DocumentKitError(error, operation: .recover, path: folder.path, step: "locking \(DraftEntryNames.lock)")
        }
        return fd
    }

    /// Writes `draft.json` atomically (a temporary file renamed over it), as durably as `durability`.
    func writeInfo(_ info: DraftInfo, durability: Durability) throws(DocumentKitError) {
        let data: Data
        do { data = try info.encoded() } catch {
            throw DocumentKitError(
                .other, operation: .save, path: infoURL.path, detail: "Can't encode the draft's record",
                underlyingError: SendableDescription(error))
        }
        try FileWrapper(regularFileWithContents: data, permissions: 0o600).write(
            to: infoURL, options: SaveOptions(durability: durability, fileSystem: fileSystem))
    }

    /// Deletes the entry (record first, so that a crash half-way leaves no listed draft without
    /// its content), then releases the lock. On failure the lock is kept: the entry is still
    /// this process's, and a later `remove()` finishes the job.
    func remove(operation: DocumentKitError.Operation = .save) throws(DocumentKitError) {
        try Self.removeEntry(at: folder, operation: operation, using: fileSystem)
        release()
    }

    /// Deletes the entry at `folder` (whose lock the caller holds): `draft.json`, the draft and
    /// anything else, `owner.lock`, then the folder. A missing entry counts as deleted.
    static func removeEntry(at folder: URL, operation: DocumentKitError.Operation, using fileSystem: FileSystem)
        throws(DocumentKitError)
    {
        let (parentPath, id) = ItemLocation.split(folder.standardizedFileURL.path)
        var path = folder.path
        let parent: Descriptor
        do { parent = try openDraftsFolder(URL(fileURLWithPath: parentPath), creating: false, operation: operation, using: fileSystem).descriptor } catch {
            if error.code == .notFound { return }
            if error.code == .untrustedFolder { throw error }
            // A system failure names the entry being removed (its step says "the drafts folder").
            var named = error
            named.path = folder.path
            throw named
        }
        var step = "opening the draft's folder"
        do throws(Errno) {
            let entry: Descriptor
            do { entry = Descriptor(owning: try fileSystem.open(id, in: parent.rawValue, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) } catch {
                if error == .noSuchFileOrDirectory { return }
                throw error
            }
            (path, step) = (folder.appendingPathComponent(DraftEntryNames.info).path, "removing the draft's record")
            try removeItem(DraftEntryNames.info, in: entry.rawValue, using: fileSystem)
            (path, step) = (folder.path, "listing the draft's folder")
            let names = try fileSystem.contentsOfDirectory(entry.rawValue, name: folder.path)
            for name in names where name != DraftEntryNames.lock {
                (path, step) = (folder.appendingPathComponent(name).path, "removing the draft")
                try removeItem(name, in: entry.rawValue, using: fileSystem)
            }
            (path, step) = (folder.appendingPathComponent(DraftEntryNames.lock).path, "removing \(DraftEntryNames.lock)")
            try removeItem(DraftEntryNames.lock, in: entry.rawValue, using: fileSystem)
            (path, step) = (folder.path, "removing the draft's folder")
            do { try fileSystem.removeDirectory(id, in: parent.rawValue) } catch {
                if error != .noSuchFileOrDirectory { throw error }
            }
        } catch {
            throw DocumentKitError(error, operation: operation, path: path, step: step)
        }
    }

    /// Closes the lock's descriptor: the entry stays on disk, a leftover anyone may recover.
    func release() {
        let fd = descriptor.withLock { fd -> CInt in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { try? fileSystem.close(fd, name: folder.appendingPathComponent(DraftEntryNames.lock).path) }
    }
}
