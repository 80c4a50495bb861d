#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
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

    static func dateString(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    static func date(from string: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: string) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: string)
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
/// document's draft.
final class DraftEntry: Sendable {
    let folder: URL
    let draftName: String
    /// The descriptor holding the lock, or -1 once released.
    private let descriptor: Mutex<CInt>

    var id: String { folder.lastPathComponent }
    var draftURL: URL { folder.appendingPathComponent(draftName, isDirectory: false) }
    var infoURL: URL { folder.appendingPathComponent(DraftEntryNames.info, isDirectory: false) }

    private init(folder: URL, draftName: String, descriptor: CInt) {
        self.folder = folder
        self.draftName = draftName
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// A new entry in `drafts` (created if missing): made under a hidden name, locked, then
    /// renamed to its ID, so that no one ever sees it unlocked while this process lives.
    static func create(in drafts: URL, for documentURL: URL) throws(DocumentKitError) -> DraftEntry {
        let id = UUID().uuidString.lowercased()
        let hidden = drafts.appendingPathComponent(".\(id).creating", isDirectory: true)
        let folder = drafts.appendingPathComponent(id, isDirectory: true)
        func fail(_ step: String, _ errno: Errno = Errno(rawValue: Glibc.errno)) -> DocumentKitError {
            DocumentKitError(errno, operation: .save, path: folder.path, step: step)
        }
        do { try FileManager.default.createDirectory(at: hidden, withIntermediateDirectories: true) } catch {
            throw DocumentKitError(
                .other, operation: .save, path: hidden.path, detail: "Can't create the draft's folder",
                underlyingError: SendableDescription(error))
        }
        let lockPath = hidden.appendingPathComponent(DraftEntryNames.lock).path
        let fd = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fail("creating \(DraftEntryNames.lock)") }
        do { try FileSystem.live.lockExclusivelyWithoutWaiting(fd, name: lockPath) } catch {
            Glibc.close(fd)
            throw fail("locking \(DraftEntryNames.lock)", error)
        }
        guard Glibc.rename(hidden.path, folder.path) == 0 else {
            let error = fail("renaming the new draft entry")
            Glibc.close(fd)
            try? FileManager.default.removeItem(at: hidden)
            throw error
        }
        return DraftEntry(folder: folder, draftName: DraftEntryNames.draftName(for: documentURL), descriptor: fd)
    }

    /// Takes over the entry of a leftover draft (recovering it): locks its `owner.lock`.
    ///
    /// - Throws: `busy` when a live process holds it (it is recovering it too, say).
    static func adopt(_ draft: RecoverableDraft) throws(DocumentKitError) -> DraftEntry {
        let fd = try lockEntry(draft.entryURL)
        return DraftEntry(folder: draft.entryURL, draftName: draft.draftURL.lastPathComponent, descriptor: fd)
    }

    /// Opens and locks the `owner.lock` of the entry at `folder` without waiting; returns the
    /// descriptor. Throws `busy` if the owner is alive.
    static func lockEntry(_ folder: URL) throws(DocumentKitError) -> CInt {
        let lockPath = folder.appendingPathComponent(DraftEntryNames.lock).path
        let fd = Glibc.open(lockPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw DocumentKitError(Errno(rawValue: Glibc.errno), operation: .recover, path: folder.path, step: "opening \(DraftEntryNames.lock)")
        }
        do { try FileSystem.live.lockExclusivelyWithoutWaiting(fd, name: lockPath) } catch {
            Glibc.close(fd)
            if error == .wouldBlock {
                throw DocumentKitError(
                    .busy, operation: .recover, path: folder.path, errno: error,
                    detail: "A live process owns this draft (it holds \(DraftEntryNames.lock)).")
            }
            throw DocumentKitError(error, operation: .recover, path: folder.path, step: "locking \(DraftEntryNames.lock)")
        }
        return fd
    }

    /// Writes `draft.json` atomically.
    func writeInfo(_ info: DraftInfo) throws(DocumentKitError) {
        do { try info.encoded().write(to: infoURL, options: .atomic) } catch {
            throw DocumentKitError(
                .other, operation: .save, path: infoURL.path, detail: "Can't write the draft's record",
                underlyingError: SendableDescription(error))
        }
    }

    /// Deletes the entry (record first, so that a crash half-way leaves no listed draft without
    /// its content), then releases the lock.
    func remove() {
        Self.removeEntry(at: folder)
        release()
    }

    static func removeEntry(at folder: URL) {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(DraftEntryNames.info))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name != DraftEntryNames.lock {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Closes the lock's descriptor: the entry stays on disk, a leftover anyone may recover.
    func release() {
        let fd = descriptor.withLock { fd -> CInt in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { Glibc.close(fd) }
    }
}
