import DocumentKitSystem
import Foundation
import Synchronization

/// The contents of a regular-file wrapper that another layer produces on demand, in pieces: a
/// member of an archive, decompressed when read; an archive being written, produced while it is
/// saved. The bytes are not kept unless ``FileWrapper/regularFileContents`` asks for them whole.
public final class ProvidedFileContents: Sendable {
    /// Produces the contents: calls `body` with each piece, in order.
    public typealias Producer = @Sendable (_ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void) throws(DocumentKitError) -> Void

    /// The size of the contents, when known before they are produced.
    public let size: Int64?
    /// What the contents are, for comparisons without producing them: two contents with one
    /// non-nil key are the same bytes (an archive's identity and a member's name, say).
    public let key: String?
    /// What the producing layer needs to know where the contents come from (an archive member's
    /// place in its archive, say), for that layer only.
    public let context: (any Sendable)?
    private let producer: Producer
    private let cache = Mutex<Data?>(nil)
    private let expectedDigest = Mutex<String?>(nil)

    /// Contents produced by `producer`, of `size` bytes if known, identified by `key` if any.
    public init(size: Int64?, key: String? = nil, context: (any Sendable)? = nil, producer: @escaping Producer) {
        self.size = size
        self.key = key
        self.context = context
        self.producer = producer
    }

    /// The SHA-256 (64 lower-case hexadecimal digits) these contents are vouched to have: set
    /// when a manifest that lists them was checked against them by size and their container
    /// protects their bytes (a zip member's CRC-32 is checked at every read). A `MemberHasher`
    /// uses it instead of reading them. Nil until then.
    public var expectedSHA256: String? {
        get { expectedDigest.withLock { $0 } }
        set { expectedDigest.withLock { $0 = newValue } }
    }

    /// Calls `body` with the contents in pieces: from memory if they were loaded, else produced.
    public func forEachChunk(_ body: (UnsafeRawBufferPointer) throws(DocumentKitError) -> Void) throws(DocumentKitError) {
        if let loaded = cache.withLock({ $0 }) {
            var failure: DocumentKitError?
            loaded.withUnsafeBytes { bytes in
                do throws(DocumentKitError) { try body(bytes) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        try producer(body)
    }

    /// The contents whole, produced once and kept.
    public func data() throws(DocumentKitError) -> Data {
        if let loaded = cache.withLock({ $0 }) { return loaded }
        var data = Data()
        if let size, size > 0, size < Int64(Int.max) { data.reserveCapacity(Int(size)) }
        try producer { (bytes) throws(DocumentKitError) in data.append(contentsOf: bytes) }
        cache.withLock { $0 = data }
        return data
    }

    /// The contents, if they were loaded whole.
    public var loaded: Data? { cache.withLock { $0 } }
}

extension FileWrapper {
    /// A regular file whose contents `contents` produces on demand.
    public init(regularFileWithProvidedContents contents: ProvidedFileContents, permissions: UInt32? = nil) {
        self.init(storage: .provided(contents), permissions: permissions, modificationDate: nil)
    }

    /// The provided contents of a regular file made with ``init(regularFileWithProvidedContents:permissions:)``, else nil.
    public var providedContents: ProvidedFileContents? {
        if case .provided(let contents) = storage { return contents }
        return nil
    }
}
