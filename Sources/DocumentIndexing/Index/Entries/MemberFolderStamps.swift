import Foundation

/// The stamps of a package's subfolders that hold members its manifest lists (`attachments`,
/// `a` and `a/b` for `a/b/c.bin`), as the entry was read. A member added, removed or renamed in a
/// subfolder changes that folder's stamp, and neither the package folder's nor the manifest's;
/// so an entry with such folders is unchanged only while they are too. Nil on a record (the
/// common case) when the manifest lists no member in a subfolder.
final class MemberFolderStamps: Sendable, Hashable {
    /// The folders, relative to the package, sorted.
    let paths: [String]
    /// Each folder's stamp (``FileStamp/none`` where there was none).
    let stamps: [FileStamp]

    init(paths: [String], stamps: [FileStamp]) {
        self.paths = paths
        self.stamps = stamps
    }

    /// Stamps not known (an entry of a version 2 index, which kept none): the entry is read again.
    static let unknown = MemberFolderStamps(paths: [], stamps: [])

    var isUnknown: Bool { paths.isEmpty }

    static func == (a: MemberFolderStamps, b: MemberFolderStamps) -> Bool { a.paths == b.paths && a.stamps == b.stamps }

    func hash(into hasher: inout Hasher) {
        hasher.combine(paths)
        hasher.combine(stamps)
    }

    /// Every folder above a member path (`a` and `a/b` for `a/b/c.bin`), sorted; empty when
    /// every member is at the top of the package.
    static func folders(holding members: some Sequence<String>) -> [String] {
        var folders = Set<String>()
        for member in members {
            var path = Substring(member)
            while let slash = path.lastIndex(of: "/") {
                path = path[..<slash]
                guard folders.insert(String(path)).inserted else { break }
            }
        }
        return folders.sorted()
    }

    // MARK: Stored form

    /// The stored form (`Formats/document-index/v3`): for each folder, its path's length in bytes
    /// (UInt16, little-endian), the path (UTF-8) and its 40-byte stamp; empty for ``unknown``.
    var blob: Data {
        var data = Data()
        for (path, stamp) in zip(paths, stamps) {
            let bytes = Array(path.utf8)
            withUnsafeBytes(of: UInt16(truncatingIfNeeded: bytes.count).littleEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: bytes)
            data.append(stamp.blob)
        }
        return data
    }

    /// The stamps stored as `blob`; nil if it is malformed.
    convenience init?(blob: Data) {
        var paths: [String] = []
        var stamps: [FileStamp] = []
        let bytes = [UInt8](blob)
        var offset = 0
        while offset < bytes.count {
            guard offset + 2 <= bytes.count else { return nil }
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            offset += 2
            guard length > 0, offset + length + 40 <= bytes.count,
                let path = String(validating: bytes[offset..<offset + length], as: UTF8.self),
                let stamp = FileStamp(blob: Data(bytes[offset + length..<offset + length + 40]))
            else { return nil }
            paths.append(path)
            stamps.append(stamp)
            offset += length + 40
        }
        self.init(paths: paths, stamps: stamps)
    }
}
