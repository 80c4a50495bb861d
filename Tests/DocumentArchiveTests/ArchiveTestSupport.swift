#if canImport(Glibc)
import Glibc
#endif
import CArchive
import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

// Builders of archives for the hostile-archive, fuzz and fixture tests: with libarchive's write
// API (CArchive) when it writes the attack, by hand (tar and zip bytes) when it won't; and a
// scene (a destination folder with a sibling) whose every byte is compared before and after an
// import.

/// A member of an archive a test builds. `$OUT` in a name or target stands for the scene's
/// `outside` folder (an absolute path, known only when the scene exists).
struct Member: Sendable, CustomStringConvertible {
    enum Kind: Sendable { case file, folder, symbolicLink, hardLink, characterDevice, blockDevice, fifo }

    var name: [UInt8]
    var kind: Kind
    var data: [UInt8] = []
    var target: String?
    var permissions: UInt32 = 0o644

    static func file(_ name: String, _ text: String = "text\n") -> Member {
        Member(name: Array(name.utf8), kind: .file, data: Array(text.utf8))
    }
    static func file(_ name: String, bytes: [UInt8]) -> Member { Member(name: Array(name.utf8), kind: .file, data: bytes) }
    static func file(rawName: [UInt8], _ text: String = "text\n") -> Member {
        Member(name: rawName, kind: .file, data: Array(text.utf8))
    }
    static func folder(_ name: String) -> Member { Member(name: Array(name.utf8), kind: .folder, permissions: 0o755) }
    static func symbolicLink(_ name: String, to target: String) -> Member {
        Member(name: Array(name.utf8), kind: .symbolicLink, target: target, permissions: 0o777)
    }
    static func hardLink(_ name: String, to target: String) -> Member { Member(name: Array(name.utf8), kind: .hardLink, target: target) }
    static func characterDevice(_ name: String) -> Member { Member(name: Array(name.utf8), kind: .characterDevice) }
    static func blockDevice(_ name: String) -> Member { Member(name: Array(name.utf8), kind: .blockDevice) }
    static func fifo(_ name: String) -> Member { Member(name: Array(name.utf8), kind: .fifo) }

    /// The member with `$OUT` replaced by `outside`.
    func resolved(outside: String) -> Member {
        var copy = self
        // Only valid UTF-8 names can hold `$OUT`; raw ones are used as they are.
        if let text = String(validating: name, as: UTF8.self), text.contains("$OUT") {
            copy.name = Array(text.replacingOccurrences(of: "$OUT", with: outside).utf8)
        }
        copy.target = target?.replacingOccurrences(of: "$OUT", with: outside)
        return copy
    }

    var fileType: UInt32 {
        switch kind {
        case .file, .hardLink: 0o100000
        case .folder: 0o040000
        case .symbolicLink: 0o120000
        case .characterDevice: 0o020000
        case .blockDevice: 0o060000
        case .fifo: 0o010000
        }
    }

    var description: String {
        let shown = String(decoding: name, as: UTF8.self)
        switch kind {
        case .file: return shown
        case .folder: return shown + "/"
        case .symbolicLink: return "\(shown) -> \(target ?? "")"
        case .hardLink: return "\(shown) => \(target ?? "")"
        case .characterDevice: return "\(shown) (character device)"
        case .blockDevice: return "\(shown) (block device)"
        case .fifo: return "\(shown) (FIFO)"
        }
    }
}

/// The containers the tests write: the formats DocumentKit exports, and plain tar (which
/// DocumentKit reads but does not write).
enum Container: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case zip
    case tarGzip = "tar.gz"
    case tar
    case tarZstd = "tar.zst"
    case tarXz = "tar.xz"

    var fileExtension: String { rawValue }
    var testDescription: String { rawValue }

    /// The export format of the same name, if DocumentKit exports it.
    var format: ArchiveFormat? { ArchiveFormat(rawValue: rawValue) }

    /// The containers this machine's libarchive writes.
    static var available: [Container] { allCases.filter { $0.format.map(\.isAvailable) ?? true } }
}

struct BuildFailure: Error, CustomStringConvertible {
    let description: String
}

/// Writes an archive with libarchive's write API, member by member; a file's data may be
/// streamed in chunks (`beginFile` then `write`), so that a bomb never sits in memory.
final class LibArchiveWriter {
    private let archive: OpaquePointer
    private var isClosed = false

    /// - Parameter storing: a zip's members are STORED (not deflated).
    init(path: String, container: Container, storing: Bool = false, options: String? = nil) throws {
        guard let archive = archive_write_new() else { throw BuildFailure(description: "archive_write_new failed") }
        self.archive = archive
        switch container {
        case .zip:
            try check(archive_write_set_format_zip(archive))
            if storing { try check(archive_write_zip_set_compression_store(archive)) }
        case .tar, .tarGzip, .tarZstd, .tarXz:
            try check(archive_write_set_format_pax_restricted(archive))
            switch container {
            case .tarGzip: try check(archive_write_add_filter_gzip(archive))
            case .tarZstd: try check(archive_write_add_filter_zstd(archive))
            case .tarXz: try check(archive_write_add_filter_xz(archive))
            default: try check(archive_write_add_filter_none(archive))
            }
        }
        if let options { try check(archive_write_set_options(archive, options)) }
        try check(archive_write_set_bytes_in_last_block(archive, 1))
        try check(archive_write_open_filename(archive, path))
    }

    deinit {
        if !isClosed { archive_write_close(archive) }
        archive_write_free(archive)
    }

    private func check(_ status: CInt, _ what: String = "") throws {
        // ARCHIVE_WARN is a write that happened with a complaint (a name it could not convert...).
        guard status < ARCHIVE_WARN else { return }
        let message = archive_error_string(archive).map { String(cString: $0) } ?? "status \(status)"
        throw BuildFailure(description: "libarchive refused \(what): \(message)")
    }

    private func header(_ member: Member, size: Int64) throws {
        guard let entry = archive_entry_new() else { throw BuildFailure(description: "archive_entry_new failed") }
        defer { archive_entry_free(entry) }
        let name = member.name.map { CChar(bitPattern: $0) } + [0]
        archive_entry_copy_pathname(entry, name)
        archive_entry_set_filetype(entry, member.fileType)
        archive_entry_set_perm(entry, mode_t(member.permissions))
        archive_entry_set_mtime(entry, 946_684_800, 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        switch member.kind {
        case .file: archive_entry_set_size(entry, size)
        case .hardLink:
            archive_entry_set_size(entry, 0)
            archive_entry_copy_hardlink(entry, member.target ?? "")
        case .symbolicLink: archive_entry_copy_symlink(entry, member.target ?? "")
        case .characterDevice, .blockDevice:
            archive_entry_set_rdevmajor(entry, 1)
            archive_entry_set_rdevminor(entry, 3)
        case .folder, .fifo: break
        }
        try check(archive_write_header(archive, entry), "the header of \(member)")
    }

    /// Writes a whole member.
    func add(_ member: Member) throws {
        try header(member, size: Int64(member.data.count))
        if member.kind == .file, !member.data.isEmpty {
            try member.data.withUnsafeBytes { try write($0) }
        }
    }

    /// Writes a file member's header; its `size` bytes follow through ``write(_:)``.
    func beginFile(_ name: String, size: Int64) throws {
        try header(Member(name: Array(name.utf8), kind: .file), size: size)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let written = archive_write_data(archive, base, bytes.count)
        guard written == bytes.count else { try check(CInt(ARCHIVE_FATAL), "data"); return }
    }

    func finish() throws {
        isClosed = true
        try check(archive_write_close(archive), "the end of the archive")
    }

    /// Writes `members` to a new archive at `url`.
    static func write(_ members: [Member], to url: URL, container: Container, storing: Bool = false) throws {
        let writer = try LibArchiveWriter(path: url.path, container: container, storing: storing)
        for member in members { try writer.add(member) }
        try writer.finish()
    }
}

/// CRC-32 (ISO-HDLC, as zip and gzip use it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

/// Little-endian fields.
extension Array where Element == UInt8 {
    mutating func append16(_ value: Int) { append(contentsOf: [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)]) }
    mutating func append32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func append32(_ value: Int) { append32(UInt32(truncatingIfNeeded: value)) }
    mutating func append64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
}

/// Zip bytes written by hand, with STORED members: what libarchive's writer will never make
/// (entries sharing data, local headers that contradict the central directory...).
enum ZipBytes {
    /// The general-purpose flag saying names are UTF-8.
    static let utf8Flag = 1 << 11

    /// A local file header (30 bytes, then the name) for STORED `data`.
    static func localHeader(name: [UInt8], data: [UInt8], flags: Int = utf8Flag) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(UInt32(0x0403_4B50))
        bytes.append16(20)  // version needed
        bytes.append16(flags)
        bytes.append16(0)  // STORED
        bytes.append16(0)  // time
        bytes.append16(0x2821)  // date: 2000-01-01
        bytes.append32(CRC32.checksum(data))
        bytes.append32(data.count)
        bytes.append32(data.count)
        bytes.append16(name.count)
        bytes.append16(0)
        bytes.append(contentsOf: name)
        return bytes
    }

    /// A central directory record for a STORED member whose local header is at `offset`.
    /// `mode` is the Unix mode (type and permissions) in the external attributes.
    static func centralRecord(
        name: [UInt8], data: [UInt8], offset: Int, flags: Int = utf8Flag, mode: UInt32 = 0o100644,
        compressedSize: UInt32? = nil, uncompressedSize: UInt32? = nil, localOffset: UInt32? = nil, extra: [UInt8] = []
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(UInt32(0x0201_4B50))
        bytes.append16(3 << 8 | 20)  // made by Unix, zip 2.0
        bytes.append16(20)
        bytes.append16(flags)
        bytes.append16(0)
        bytes.append16(0)
        bytes.append16(0x2821)
        bytes.append32(CRC32.checksum(data))
        bytes.append32(compressedSize ?? UInt32(data.count))
        bytes.append32(uncompressedSize ?? UInt32(data.count))
        bytes.append16(name.count)
        bytes.append16(extra.count)
        bytes.append16(0)  // comment
        bytes.append16(0)  // disk
        bytes.append16(0)  // internal attributes
        bytes.append32(mode << 16)
        bytes.append32(localOffset ?? UInt32(offset))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: extra)
        return bytes
    }

    /// The end-of-central-directory record.
    static func end(count: Int, directorySize: Int, directoryOffset: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append32(UInt32(0x0605_4B50))
        bytes.append16(0)
        bytes.append16(0)
        bytes.append16(count)
        bytes.append16(count)
        bytes.append32(directorySize)
        bytes.append32(directoryOffset)
        bytes.append16(0)
        return bytes
    }

    /// A well-formed zip of STORED members (`mode` per member: the Unix type and permissions).
    static func stored(_ members: [(name: [UInt8], data: [UInt8], mode: UInt32)]) -> [UInt8] {
        var bytes: [UInt8] = []
        var directory: [UInt8] = []
        for member in members {
            directory += centralRecord(name: member.name, data: member.data, offset: bytes.count, mode: member.mode)
            bytes += localHeader(name: member.name, data: member.data)
            bytes += member.data
        }
        let directoryOffset = bytes.count
        return bytes + directory + end(count: members.count, directorySize: directory.count, directoryOffset: directoryOffset)
    }

    static func stored(_ files: [(String, [UInt8])]) -> [UInt8] {
        stored(files.map { (Array($0.0.utf8), $0.1, UInt32(0o100644)) })
    }

    /// David Fifield's non-recursive zip bomb, with STORED members: each member's data is the
    /// next member's local header followed by the data of the last one (the kernel), so that
    /// every central directory record points at a distinct local header but all the members'
    /// data overlap. `names` in order; the last one holds the kernel alone.
    static func overlapping(names: [String], kernel: [UInt8]) -> [UInt8] {
        // Built from the last member back: each member's data is what follows its header.
        var tail = kernel
        var headers: [[UInt8]] = []
        for name in names.reversed() {
            let header = localHeader(name: Array(name.utf8), data: tail)
            headers.insert(header, at: 0)
            tail = header + tail
        }
        // tail is now the whole file before the central directory.
        var directory: [UInt8] = []
        var offset = 0
        for (index, name) in names.enumerated() {
            let data = Array(tail[(offset + headers[index].count)...])
            directory += centralRecord(name: Array(name.utf8), data: data, offset: offset)
            offset += headers[index].count
        }
        return tail + directory + end(count: names.count, directorySize: directory.count, directoryOffset: tail.count)
    }

    /// Two central directory records for one local header (one member's data, listed twice).
    static func sharedLocalHeader(name: String, data: [UInt8], copies: Int) -> [UInt8] {
        let header = localHeader(name: Array(name.utf8), data: data)
        var directory: [UInt8] = []
        for _ in 0..<copies { directory += centralRecord(name: Array(name.utf8), data: data, offset: 0) }
        let body = header + data
        return body + directory + end(count: copies, directorySize: directory.count, directoryOffset: body.count)
    }

    /// A zip whose local header names a member `localName` while the central directory calls
    /// it `centralName`: a streaming extractor and a central-directory one see different files.
    static func mismatched(localName: String, centralName: String, data: [UInt8]) -> [UInt8] {
        let header = localHeader(name: Array(localName.utf8), data: data)
        let directory = centralRecord(name: Array(centralName.utf8), data: data, offset: 0)
        let body = header + data
        return body + directory + end(count: 1, directorySize: directory.count, directoryOffset: body.count)
    }
}

/// Tar (ustar) bytes written by hand: for what libarchive's writer converts or refuses.
struct TarBytes {
    private(set) var bytes: [UInt8] = []

    private static func octal(_ value: Int, width: Int) -> [UInt8] {
        let digits = Array(String(value, radix: 8).utf8)
        return [UInt8](repeating: UInt8(ascii: "0"), count: max(0, width - 1 - digits.count)) + digits + [0]
    }

    /// Appends a member: `type` is the ustar type flag ("0" file, "5" folder, "2" link...).
    mutating func add(name: [UInt8], type: Character = "0", data: [UInt8] = [], linkName: [UInt8] = [], mode: Int = 0o644) {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ field: [UInt8], at offset: Int) { for (index, byte) in field.enumerated() { header[offset + index] = byte } }
        put(Array(name.prefix(100)), at: 0)
        put(Self.octal(mode, width: 8), at: 100)
        put(Self.octal(0, width: 8), at: 108)
        put(Self.octal(0, width: 8), at: 116)
        put(Self.octal(data.count, width: 12), at: 124)
        put(Self.octal(946_684_800, width: 12), at: 136)
        put([UInt8](repeating: UInt8(ascii: " "), count: 8), at: 148)
        header[156] = UInt8(ascii: type.unicodeScalars.first!)
        put(Array(linkName.prefix(100)), at: 157)
        put(Array("ustar\u{0}00".utf8), at: 257)
        let sum = header.reduce(0) { $0 + Int($1) }
        put(Self.octal(sum, width: 7) + [UInt8(ascii: " ")], at: 148)
        bytes += header
        bytes += data
        bytes += [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    /// The archive with its end (two zero blocks).
    var finished: [UInt8] { bytes + [UInt8](repeating: 0, count: 1024) }
}

/// A test's folders: `root` holds the archive, the destination folder (with a file of its own)
/// and a sibling folder (`outside`, with a secret file) that no import may touch.
final class Scene {
    let folder: TemporaryDirectory
    var root: URL { folder.url }
    let destination: URL
    let outside: URL

    /// A scene in a new folder of the system's temporary folder (or of `parent`).
    init(_ prefix: String = "hostile", in parent: URL? = nil) throws {
        folder = try TemporaryDirectory(prefix: prefix, in: parent)
        destination = folder.appending("Imports")
        outside = folder.appending("outside")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        try Data("mine\n".utf8).write(to: destination.appendingPathComponent("keep.txt"))
        try Data("secret\n".utf8).write(to: outside.appendingPathComponent("secret.txt"))
    }

    /// Writes `members` (with `$OUT` resolved) as an archive named `name` in the root.
    @discardableResult
    func archive(_ members: [Member], as container: Container, name: String = "attack", storing: Bool = false) throws -> URL {
        let url = root.appendingPathComponent("\(name).\(container.fileExtension)")
        try LibArchiveWriter.write(members.map { $0.resolved(outside: outside.path) }, to: url, container: container, storing: storing)
        return url
    }

    /// Writes raw bytes as an archive file in the root.
    @discardableResult
    func archive(bytes: [UInt8], name: String) throws -> URL {
        let url = root.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// Every item under the root (hidden ones and non-UTF-8 names included), described by
    /// kind, size, link count and contents: what an import must leave as it was.
    func snapshot() -> [String: String] { Tree.describe(root.path) }
}

/// Walks trees with the system calls (names as bytes: Foundation may drop non-UTF-8 names).
enum Tree {
    static func describe(_ path: String) -> [String: String] {
        var result: [String: String] = [:]
        walk(Array(path.utf8), relative: []) { relative, description in
            result[String(decoding: relative, as: UTF8.self) + (relative.contains { $0 >= 0x80 } ? " \(relative)" : "")] = description
        }
        return result
    }

    /// The names in a folder (as bytes, "." and ".." left out), or nil if it can't be listed.
    static func names(_ path: [UInt8]) -> [[UInt8]]? {
        guard let directory = opendir(cString(path)) else { return nil }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func cString(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

    private static func walk(_ path: [UInt8], relative: [UInt8], visit: ([UInt8], String) -> Void) {
        for name in names(path) ?? [] {
            let child = path + [0x2F] + name
            let childRelative = relative.isEmpty ? name : relative + [0x2F] + name
            var status = stat()
            guard lstat(cString(child), &status) == 0 else {
                visit(childRelative, "vanished")
                continue
            }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                visit(childRelative, "folder")
                walk(child, relative: childRelative, visit: visit)
            case S_IFLNK:
                var buffer = [CChar](repeating: 0, count: 4096)
                let count = readlink(cString(child), &buffer, buffer.count)
                visit(childRelative, "link -> " + String(decoding: buffer.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            case S_IFREG:
                var description = "file \(status.st_size) bytes, \(status.st_nlink) links"
                if status.st_size <= 1 << 20, let data = FileManager.default.contents(atPath: String(decoding: child, as: UTF8.self)) {
                    description += ", crc \(CRC32.checksum(data))"
                }
                visit(childRelative, description)
            default: visit(childRelative, "special \(String(status.st_mode, radix: 8))")
            }
        }
    }

    /// Bytes allocated on disk (and bytes of data) under `path`, not following links.
    static func diskUse(_ path: String) -> (allocated: Int64, size: Int64) {
        var total: (allocated: Int64, size: Int64) = (0, 0)
        func visit(_ path: [UInt8]) {
            var status = stat()
            guard lstat(cString(path), &status) == 0 else { return }
            total.allocated += Int64(status.st_blocks) * 512
            if status.st_mode & S_IFMT == S_IFREG { total.size += Int64(status.st_size) }
            if status.st_mode & S_IFMT == S_IFDIR { for name in names(path) ?? [] { visit(path + [0x2F] + name) } }
        }
        visit(Array(path.utf8))
        return total
    }

    /// Where the path `relative` (below `base`) really leads when every symbolic link on the
    /// way is followed as the kernel would, a missing item ending the resolution (the rest is
    /// taken literally, as a creation through a dangling link would be): an absolute path, or
    /// nil for a loop.
    static func resolve(_ relative: String, below base: String) -> String? {
        var stack = base.split(separator: "/").map(String.init)
        var pending = Array(relative.split(separator: "/").map(String.init).reversed())
        var hops = 0
        var missing = false
        while let part = pending.popLast() {
            if part == "." || part.isEmpty { continue }
            if part == ".." {
                if !stack.isEmpty { stack.removeLast() }
                continue
            }
            stack.append(part)
            if missing { continue }
            let path = "/" + stack.joined(separator: "/")
            var status = stat()
            guard lstat(path, &status) == 0 else {
                missing = true
                continue
            }
            if status.st_mode & S_IFMT == S_IFLNK {
                hops += 1
                if hops > 40 { return nil }
                var buffer = [CChar](repeating: 0, count: 4096)
                let count = readlink(path, &buffer, buffer.count)
                let target = String(decoding: buffer.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                stack.removeLast()
                if target.hasPrefix("/") { stack = [] }
                pending.append(contentsOf: target.split(separator: "/").map(String.init).reversed())
            }
        }
        return "/" + stack.joined(separator: "/")
    }

    /// Every symbolic link under `folder`, by absolute path.
    static func links(under folder: String) -> [String] {
        var result: [String] = []
        walk(Array(folder.utf8), relative: []) { relative, description in
            if description.hasPrefix("link -> ") { result.append(folder + "/" + String(decoding: relative, as: UTF8.self)) }
        }
        return result
    }
}

/// A file system that runs `observe` before every call (and never fails one).
func observingFileSystem(_ observe: @escaping @Sendable (SystemCall, String) -> Void) -> FileSystem {
    FileSystem(interceptor: { call, name in
        observe(call, name)
        return nil
    })
}

/// Imports `archive` into the scene's destination expecting a refusal with `code`, naming
/// `entry` (when given; a folder's trailing slash is ignored); checks the message names the
/// archive and that no byte under the scene's root changed (the destination holds what it held,
/// no staging folder is left, nothing appeared beside it). Both `importItems` (durable) and
/// `extract` (consistent).
@discardableResult
func expectRefusal(
    of archive: URL, in scene: Scene, code: DocumentKitError.Code, entry: String?, limits: ArchiveLimits = .default,
    mustStayAbsent: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
) async -> DocumentKitError? {
    let before = scene.snapshot()
    let absentBefore = mustStayAbsent.map { FileManager.default.fileExists(atPath: $0) || isLink($0) }
    var first: DocumentKitError?
    for useExtract in [false, true] {
        // importItems flushes as it goes (the default), extract does not: both paths are refused alike.
        let options = ArchiveImportOptions(limits: limits, durability: useExtract ? .consistent : .durable, existingItems: .refuse)
        let error: DocumentKitError
        do {
            if useExtract {
                let staged = try await DocumentArchiver.extract(archiveAt: archive, into: scene.destination, options: options)
                Issue.record("extract accepted the archive: \(staged.items.map(\.name))", sourceLocation: sourceLocation)
                staged.discard()
            } else {
                let urls = try await DocumentArchiver.importItems(from: archive, into: scene.destination, options: options)
                Issue.record("the archive was imported: \(urls.map(\.lastPathComponent))", sourceLocation: sourceLocation)
                for url in urls { try? FileManager.default.removeItem(at: url) }
            }
            continue
        } catch let caught { error = caught }
        if first == nil { first = error }
        let call = useExtract ? "extract" : "importItems"
        #expect(error.code == code, "\(call): \(error)", sourceLocation: sourceLocation)
        if let entry {
            let named = error.archiveEntry.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            #expect(named == entry, "\(call): the error names \(error.archiveEntry.debugDescription): \(error)", sourceLocation: sourceLocation)
        }
        #expect("\(error)".contains(archive.standardizedFileURL.path), "\(call): \(error)", sourceLocation: sourceLocation)
        let after = scene.snapshot()
        #expect(after == before, "\(call) changed the folders: \(difference(before, after))", sourceLocation: sourceLocation)
    }
    for (path, existed) in zip(mustStayAbsent, absentBefore) {
        #expect((FileManager.default.fileExists(atPath: path) || isLink(path)) == existed, "\(path) was written", sourceLocation: sourceLocation)
    }
    return first
}

func isLink(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
}

/// What differs between two snapshots, in words.
func difference(_ before: [String: String], _ after: [String: String]) -> String {
    var lines: [String] = []
    for key in Set(before.keys).union(after.keys).sorted() where before[key] != after[key] {
        lines.append("\(key): \(before[key] ?? "absent") → \(after[key] ?? "absent")")
    }
    return lines.joined(separator: "; ")
}

/// A small package: `Trip.note` with its manifest-like JSON, a body and a binary attachment.
enum TripNote {
    static let files: [(path: String, contents: [UInt8])] = [
        ("Info.json", Array(#"{"format":"notes","version":1,"title":"Trip"}"#.utf8)),
        ("attachments/map.bin", (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 3) }),
        ("body.md", Array("# Trip\n\nPack the tent.\n".utf8)),
    ]

    /// Writes the package at `url` with fixed permissions (0644 files, 0755 folders), so that
    /// a deterministic export of it gives the same bytes on every machine.
    static func make(at url: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: url.appendingPathComponent("attachments"), withIntermediateDirectories: true)
        for (path, contents) in files {
            let file = url.appendingPathComponent(path)
            try Data(contents).write(to: file)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        }
        for folder in [url, url.appendingPathComponent("attachments")] {
            try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        }
    }

    /// The members an import of an archive of the package gives, relative to the destination.
    static var expectedMembers: [String: String] {
        var result: [String: String] = ["Trip.note": "folder", "Trip.note/attachments": "folder"]
        for (path, contents) in files {
            result["Trip.note/" + path] = "file \(contents.count) bytes, 1 links, crc \(CRC32.checksum(contents))"
        }
        return result
    }
}

/// Runs one test of this test binary in a child process: for inputs that may crash the process
/// (a crash there is a failed expectation here, not the end of the whole test run) or hang it.
enum ChildProcess {
    struct Outcome: CustomStringConvertible {
        var exitedNormally: Bool
        var status: Int32
        var output: String
        var timedOut: Bool
        var succeeded: Bool { exitedNormally && status == 0 && !timedOut }
        var description: String {
            let how = timedOut ? "was killed, stuck" : exitedNormally ? "exited with status \(status)" : "died of signal \(status)"
            return "the child process \(how): \(excerpt)"
        }

        /// The lines of the output that say what went wrong: a crash's message and the first
        /// frames of its backtrace in this package's sources, the issues recorded.
        var excerpt: String {
            let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
            var kept: [Substring] = []
            var frames = 0
            for line in lines where !line.hasPrefix("↳ Testing Library") && !line.hasPrefix("↳ Target Platform") {
                if line.contains("runtime failure") || line.contains("Fatal error") || line.contains("crashed") || line.contains("recorded an issue")
                    || line.hasPrefix("↳") || line.hasPrefix("FUZZ-SUMMARY") || line.hasPrefix("CHILD-RESULT")
                {
                    kept.append(line)
                } else if frames < 6, line.contains("/Sources/") || line.contains("/Tests/") {
                    frames += 1
                    kept.append(line)
                }
            }
            return kept.isEmpty ? String(output.suffix(2_000)) : kept.suffix(40).joined(separator: "\n")
        }
    }

    /// The test binary (this process's executable).
    static var testBinary: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// Runs the Swift Testing tests matching `filter` in a child process with `environment`
    /// added; kills it (by its pid) if `isStuck` says so, asked once a second.
    static func runTests(
        matching filter: String, environment: [String: String], outputIn folder: URL,
        isStuck: @escaping @Sendable () -> Bool = { false }
    ) async throws -> Outcome {
        let outputURL = folder.appendingPathComponent("child-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: testBinary)
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        // A crash's backtrace: short, and quick to write.
        let backtrace = "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,limit=24"
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": backtrace]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = output
        let finished = Mutex<(reason: Process.TerminationReason, status: Int32)?>(nil)
        process.terminationHandler = { child in
            let result = (child.terminationReason, child.terminationStatus)
            finished.withLock { $0 = result }
        }
        try process.run()
        let pid = process.processIdentifier
        var timedOut = false
        while true {
            if let result = finished.withLock({ $0 }) {
                let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
                return Outcome(exitedNormally: result.reason == .exit, status: result.status, output: text, timedOut: timedOut)
            }
            try? await Task.sleep(for: .milliseconds(200))
            if !timedOut, isStuck() {
                timedOut = true
                kill(pid, SIGKILL)
            }
        }
    }
}

/// The outcome of one import in a child process, as the child prints it.
@Suite struct ArchiveChildProcessTests {
    static let archiveVariable = "DOCUMENTKIT_ARCHIVE_CHILD_IMPORT"
    static let destinationVariable = "DOCUMENTKIT_ARCHIVE_CHILD_DESTINATION"

    /// Imports one archive (run by ``importInChild(_:into:in:)``, never on its own).
    @Test(.enabled(if: ProcessInfo.processInfo.environment[archiveVariable] != nil))
    func importOneArchive() async throws {
        let environment = ProcessInfo.processInfo.environment
        let archive = URL(fileURLWithPath: try #require(environment[Self.archiveVariable]))
        let destination = URL(fileURLWithPath: try #require(environment[Self.destinationVariable]))
        do {
            let urls = try await DocumentArchiver.importItems(
                from: archive, into: destination, options: ArchiveImportOptions(durability: .consistent, existingItems: .refuse))
            print("CHILD-RESULT imported \(urls.map(\.lastPathComponent))")
        } catch {
            print("CHILD-RESULT refused \(error.code) entry=\(error.archiveEntry ?? "-") message=\(error)")
        }
    }

    /// Imports `archive` into `destination` in a child process: its outcome (the child's
    /// "CHILD-RESULT" line is in the output when it did not crash).
    static func importInChild(_ archive: URL, into destination: URL, in folder: URL) async throws -> ChildProcess.Outcome {
        try await ChildProcess.runTests(
            matching: "ArchiveChildProcessTests/importOneArchive",
            environment: [archiveVariable: archive.path, destinationVariable: destination.path], outputIn: folder)
    }
}
