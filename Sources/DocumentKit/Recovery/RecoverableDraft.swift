#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import DocumentKitSystem
import FilePackages
import Foundation
import Logging

/// A draft a process autosaved and left behind when it died: recovery data
/// (``Document/recoverable(in:using:)``).
///
/// Bring it back with ``Document/open(recovering:)``, which opens its document with the
/// draft's content as unsaved changes (the draft is deleted at the next successful save), or
/// delete it with ``discard(using:)``.
public struct RecoverableDraft: Sendable, Hashable, Identifiable {
    /// The entry's ID (the name of its folder in the drafts folder).
    public var id: String { entryURL.lastPathComponent }
    /// The entry: the folder holding the draft, its record and its lock.
    public let entryURL: URL
    /// The document the draft belongs to (it may not exist: a new document never saved).
    public let documentURL: URL
    /// The document's class, as `String(describing:)` names it.
    public let documentTypeName: String
    /// When the draft was autosaved.
    public let date: Date
    /// The draft: the document's file or package as autosaved.
    public let draftURL: URL
    /// The process that wrote it, on ``host``.
    public let ownerPID: Int32
    /// The host name of the machine the owner ran on.
    public let host: String

    /// Deletes the draft.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` `busy` if a live process owns it again (recovering it);
    ///   the failed step, naming the item, if the deletion fails.
    public func discard(using fileSystem: FileSystem = .live) throws(DocumentKitError) {
        try Self.discardEntry(entryURL, using: fileSystem)
    }

    /// Locks the entry at `entryURL`, deletes it, and releases the lock.
    static func discardEntry(_ entryURL: URL, using fileSystem: FileSystem) throws(DocumentKitError) {
        let fd = try DraftEntry.lockEntry(entryURL, using: fileSystem)
        defer { try? fileSystem.close(fd, name: entryURL.appendingPathComponent(DraftEntryNames.lock).path) }
        try DraftEntry.removeEntry(at: entryURL, operation: .remove, using: fileSystem)
    }

    /// A draft entry that can't be recovered: its owner is dead, but its record or its draft is
    /// missing or malformed (a crash while it was being created or deleted, say).
    public struct Damaged: Sendable, Hashable {
        /// The entry's folder.
        public let entryURL: URL
        /// What is wrong with it.
        public let problem: String

        /// Deletes the entry.
        public func discard(using fileSystem: FileSystem = .live) throws(DocumentKitError) {
            try RecoverableDraft.discardEntry(entryURL, using: fileSystem)
        }
    }

    /// What a look at a drafts folder found.
    public struct Scan: Sendable {
        /// The drafts whose owner is dead, oldest first.
        public var drafts: [RecoverableDraft] = []
        /// Entries whose owner is dead that can't be recovered.
        public var damaged: [Damaged] = []
        /// How many entries a live process owns (not recoverable).
        public var live = 0
        /// Why the folder could not be looked at (nil if it could, or is missing): for example
        /// `untrustedFolder`, a folder another user could have filled, whose drafts are not listed.
        public var folderError: DocumentKitError?
    }

    private static let logger = Logger(label: "DocumentKit.recovery")

    /// Every entry of the drafts folder `folder`, whatever its document's type: the recoverable
    /// drafts (owner dead), the damaged entries, and how many a live process owns. A missing
    /// folder holds nothing; one that can't be listed is logged and holds nothing either.
    /// Entries are never changed by a scan.
    public static func scan(_ folder: URL, using fileSystem: FileSystem = .live) -> Scan {
        var scan = Scan()
        var names: [String] = []
        do throws(DocumentKitError) {
            let drafts = try DraftEntry.openDraftsFolder(folder, creating: false, operation: .recover, using: fileSystem)
            do { names = try fileSystem.contentsOfDirectory(drafts.descriptor.rawValue, name: folder.path).filter { !$0.hasPrefix(".") }.sorted() } catch {
                throw DocumentKitError(error, operation: .recover, path: folder.path, step: "listing the drafts folder")
            }
        } catch {
            if error.code != .notFound {
                logger.warning("\(error)")
                scan.folderError = error
            }
        }
        for name in names {
            let entry = folder.appendingPathComponent(name, isDirectory: true)
            guard (try? fileSystem.status(of: entry.path, in: AT_FDCWD, followingLink: true))?.kind == .directory else { continue }
            let fd: CInt
            do { fd = try DraftEntry.lockEntry(entry, using: fileSystem) } catch {
                if error.code == .busy { scan.live += 1 } else { scan.damaged.append(Damaged(entryURL: entry, problem: "\(error)")) }
                continue
            }
            defer { try? fileSystem.close(fd, name: entry.appendingPathComponent(DraftEntryNames.lock).path) }
            switch read(entry, using: fileSystem) {
            case .success(let draft): scan.drafts.append(draft)
            case .failure(let problem): scan.damaged.append(Damaged(entryURL: entry, problem: problem.message))
            }
        }
        for damaged in scan.damaged {
            logger.warning("Damaged draft \(damaged.entryURL.path): \(damaged.problem)")
        }
        scan.drafts.sort { ($0.date, $0.id) < ($1.date, $1.id) }
        return scan
    }

    private struct Problem: Error { let message: String }

    /// The draft the entry at `entry` records (its lock held by the caller).
    private static func read(_ entry: URL, using fileSystem: FileSystem) -> Result<RecoverableDraft, Problem> {
        let infoPath = entry.appendingPathComponent(DraftEntryNames.info).path
        let data: Data
        do throws(Errno) {
            let fd = Descriptor(owning: try fileSystem.open(infoPath, in: AT_FDCWD, flags: O_RDONLY))
            let status = try fileSystem.status(of: fd.rawValue, name: infoPath)
            guard status.kind == .regular else { return .failure(Problem(message: "\(DraftEntryNames.info) is not a file")) }
            data = try readAll(fd.rawValue, size: Int(clamping: status.size), name: infoPath, using: fileSystem)
        } catch {
            return .failure(Problem(message: "\(DraftEntryNames.info) is missing or unreadable: \(error.readableDescription)"))
        }
        let info: DraftInfo
        do { info = try DraftInfo.decode(data) } catch {
            return .failure(Problem(message: "\(DraftEntryNames.info) is malformed: \(error)"))
        }
        guard info.format == DraftInfo.currentFormat else {
            return .failure(Problem(message: "\(DraftEntryNames.info) is in format \(info.format); this version reads format \(DraftInfo.currentFormat)"))
        }
        guard let date = DraftInfo.date(from: info.date) else { return .failure(Problem(message: "the date “\(info.date)” is not ISO 8601")) }
        guard info.document.hasPrefix("/") else { return .failure(Problem(message: "the document path “\(info.document)” is not absolute")) }
        guard !info.draft.isEmpty, !info.draft.contains("/"), info.draft != DraftEntryNames.info, info.draft != DraftEntryNames.lock,
            let status = try? fileSystem.status(of: entry.appendingPathComponent(info.draft).path, in: AT_FDCWD, followingLink: true)
        else { return .failure(Problem(message: "the draft “\(info.draft)” is missing")) }
        let isDirectory = status.kind == .directory
        return .success(
            RecoverableDraft(
                entryURL: entry, documentURL: URL(fileURLWithPath: info.document), documentTypeName: info.documentType, date: date,
                draftURL: entry.appendingPathComponent(info.draft, isDirectory: isDirectory), ownerPID: info.ownerPID,
                host: info.host))
    }
}
