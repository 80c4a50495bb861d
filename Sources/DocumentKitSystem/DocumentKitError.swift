import SystemPackage

/// An error from DocumentKit: what failed, on which file, at which step, and why.
///
/// The message names the file and the cause; its wording is not API. Match on ``code``
/// (and, for system failures, ``errno``) instead.
public struct DocumentKitError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; don't switch exhaustively.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short, stable name for the code, such as `noSpace`.
        public let name: String
        /// Makes a code with the given stable name.
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The item does not exist.
        public static let notFound = Code("notFound")
        /// An item is in the way (it exists already).
        public static let alreadyExists = Code("alreadyExists")
        /// The process may not read or change the item.
        public static let permissionDenied = Code("permissionDenied")
        /// The file system is mounted read-only.
        public static let readOnlyFileSystem = Code("readOnlyFileSystem")
        /// The disk (or the user's quota) is full.
        public static let noSpace = Code("noSpace")
        /// Two items that must be on one file system are not.
        public static let crossDevice = Code("crossDevice")
        /// The device reported an input/output error.
        public static let ioError = Code("ioError")
        /// The item is of a kind this operation can't handle (a FIFO, a device, a socket...).
        public static let unsupportedFileType = Code("unsupportedFileType")
        /// The file system doesn't support an operation that this one needs.
        public static let unsupportedByFileSystem = Code("unsupportedByFileSystem")
        /// The item on disk is no longer the one that was read.
        public static let changedSinceRead = Code("changedSinceRead")
        /// A file has other hard links and the chosen policy refuses to save it.
        public static let hardLinked = Code("hardLinked")
        /// A symbolic link would lead out of a package, or links loop.
        public static let symbolicLinkNotAllowed = Code("symbolicLinkNotAllowed")
        /// The item is busy or locked by someone else.
        public static let busy = Code("busy")
        /// The contents are malformed.
        public static let corruptData = Code("corruptData")
        /// A name or argument is not acceptable.
        public static let invalidArgument = Code("invalidArgument")
        /// The document was written by a newer version of its format than this app reads, or
        /// needs a feature this app doesn't know.
        public static let newerFormat = Code("newerFormat")
        /// The document is in another format than the one asked for.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// Some members of a package don't match its manifest: a sync may have delivered it half-way.
        public static let incompletePackage = Code("incompletePackage")
        /// Some members of a package don't match its manifest and nothing in it has changed for a
        /// while: another program edited or damaged it without writing the manifest. Accepting the
        /// members on disk (`Document.acceptMembersOnDisk()`) makes them the document's state again.
        public static let modifiedPackage = Code("modifiedPackage")
        /// A registered migration step failed; the document in memory is as it was before it.
        public static let migrationFailed = Code("migrationFailed")
        /// The document may be read but not changed by this app: a newer version of its format
        /// wrote it and allows only newer writers (its `minWriterVersion`).
        public static let readOnlyDocument = Code("readOnlyDocument")
        /// A folder for per-user state (coordination, drafts), or a file in it, is not the user's
        /// own, or another user may change it: it is refused (the message says why and what to do).
        public static let untrustedFolder = Code("untrustedFolder")
        /// An archive entry was refused because extracting it could write outside the destination
        /// or make something other than files, folders and links inside it: an absolute path or
        /// `..`, a link leading out, a device, a FIFO, a duplicate or a DocumentKit temporary name.
        /// ``DocumentKitError/archiveEntry`` names it.
        public static let unsafeArchiveEntry = Code("unsafeArchiveEntry")
        /// An archive went over one of the limits of its import (total or entry size, entry count,
        /// compression ratio, depth, path length): a decompression bomb, or limits set too low.
        public static let archiveLimitExceeded = Code("archiveLimitExceeded")
        /// The operation was cancelled (its task was); it left nothing behind.
        public static let cancelled = Code("cancelled")
        /// Any other failure; see ``DocumentKitError/errno``.
        public static let other = Code("other")
    }

    /// What was being done when the failure happened.
    public enum Operation: String, Sendable {
        case read, save, open, close, recover, remove, move, create, edit
    }

    /// What kind of failure this is.
    public var code: Code
    /// The operation that failed.
    public var operation: Operation
    /// The path of the item the operation was about (the document, not a temporary file).
    public var path: String
    /// The step that failed, in words (for example "flushing the new tree to disk (fsync)").
    public var step: String?
    /// The system error behind the failure, if any.
    public var errno: Errno?
    /// Whether the original item is known to be untouched (`true`), known to be replaced, or unknown (`nil`).
    public var originalIsIntact: Bool?
    /// Extra explanation.
    public var detail: String?
    /// The error behind this one, when it came from elsewhere (for example a subclass's decoder).
    public var underlyingError: (any Error & Sendable)?
    /// For an archive's failure: the entry (its name in the archive) being read or written.
    public var archiveEntry: String?
    /// For an `incompletePackage` or a `modifiedPackage`: the contents of the newest whole version
    /// of the document in its version store, which the app may offer instead (read it, never
    /// change it); nil when the document has no store or the store has no version of it.
    public var lastCompleteVersionPath: String?

    /// Makes an error.
    public init(
        _ code: Code, operation: Operation, path: String, step: String? = nil, errno: Errno? = nil,
        originalIsIntact: Bool? = nil, detail: String? = nil, underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.step = step
        self.errno = errno
        self.originalIsIntact = originalIsIntact
        self.detail = detail
        self.underlyingError = underlyingError
    }

    /// Makes an error from a failed system call, choosing the code from the errno value.
    public init(
        _ errno: Errno, operation: Operation, path: String, step: String?, originalIsIntact: Bool? = nil
    ) {
        self.init(
            Code(errno: errno), operation: operation, path: path, step: step, errno: errno,
            originalIsIntact: originalIsIntact)
    }

    public var description: String {
        var text = "Couldn't \(operation.rawValue) “\(path)”"
        if let step { text += ": \(step)" }
        if let errno { text += " failed: \(errno.readableDescription)" }
        if let detail {
            text += (errno == nil && step == nil ? ": " : ". ") + detail
        } else if errno == nil && step != nil {
            text += " failed"
        }
        if let underlyingError { text += " (\(underlyingError))" }
        // A detail that is a sentence already ends with its own full stop.
        if !text.hasSuffix(".") { text += "." }
        if originalIsIntact == true { text += " The original is unchanged." }
        return text
    }
}

extension DocumentKitError.Code {
    /// The code that best describes a system error.
    public init(errno: Errno) {
        switch errno {
        case .noSuchFileOrDirectory: self = .notFound
        case .fileExists, .directoryNotEmpty: self = .alreadyExists
        case .permissionDenied, .notPermitted: self = .permissionDenied
        case .readOnlyFileSystem: self = .readOnlyFileSystem
        case .noSpace, .diskQuotaExceeded: self = .noSpace
        case .improperLink: self = .crossDevice
        case .ioError: self = .ioError
        case .tooManySymbolicLinkLevels: self = .symbolicLinkNotAllowed
        case .resourceBusy, .wouldBlock: self = .busy
        case .notSupported, .noFunction: self = .unsupportedByFileSystem
        case .invalidArgument, .fileNameTooLong: self = .invalidArgument
        default: self = .other
        }
    }
}

extension Errno {
    /// "Input/output error (EIO)": the system's message and the symbolic name.
    public var readableDescription: String {
        if let name = Errno.symbolicNames[rawValue] { return "\(description) (\(name))" }
        return "\(description) (errno \(rawValue))"
    }

    private static let symbolicNames: [CInt: String] = [
        Errno.notPermitted.rawValue: "EPERM", Errno.noSuchFileOrDirectory.rawValue: "ENOENT",
        Errno.interrupted.rawValue: "EINTR", Errno.ioError.rawValue: "EIO",
        Errno.badFileDescriptor.rawValue: "EBADF", Errno.permissionDenied.rawValue: "EACCES",
        Errno.resourceBusy.rawValue: "EBUSY", Errno.fileExists.rawValue: "EEXIST",
        Errno.improperLink.rawValue: "EXDEV", Errno.notDirectory.rawValue: "ENOTDIR",
        Errno.isDirectory.rawValue: "EISDIR", Errno.invalidArgument.rawValue: "EINVAL",
        Errno.noSpace.rawValue: "ENOSPC", Errno.readOnlyFileSystem.rawValue: "EROFS",
        Errno.tooManyLinks.rawValue: "EMLINK", Errno.fileNameTooLong.rawValue: "ENAMETOOLONG",
        Errno.directoryNotEmpty.rawValue: "ENOTEMPTY", Errno.tooManySymbolicLinkLevels.rawValue: "ELOOP",
        Errno.diskQuotaExceeded.rawValue: "EDQUOT", Errno.notSupported.rawValue: "EOPNOTSUPP",
        Errno.noFunction.rawValue: "ENOSYS", Errno.wouldBlock.rawValue: "EAGAIN",
        Errno.tooManyOpenFiles.rawValue: "EMFILE",
    ]
}
