#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A library folder for one test, with helpers to make items in it and read them back.
struct VersionLibrary {
    static let format = FormatDescription(identifier: "org.documentkit.tests.versions", version: 1)
    static let writer = DocumentManifest.Writer(name: "version-tests", version: "1.0")

    let folder: TemporaryDirectory
    var url: URL { folder.url }

    init() throws { folder = try TemporaryDirectory(prefix: "dk-versions") }

    /// `relative` inside the library.
    func item(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    /// A store of this library; keeps every version unless told otherwise. `trustHorizon`: how
    /// long it takes an entry it found whole as it was (zero: it looks at every entry each time).
    func store(
        pruning: PruningSchedule = .keepAll, coordinator: FileCoordinator? = nil, trustHorizon: Duration = VersionStore.defaultTrustHorizon
    ) -> VersionStore {
        VersionStore(libraryURL: url, coordinator: coordinator, pruning: pruning, durability: .consistent, trustHorizon: trustHorizon)
    }

    /// The store's own folder.
    var storeURL: URL { url.appendingPathComponent(VersionStore.folderName) }

    /// The folders under `documents/` (one per document the store knows).
    func documentFolders() -> [URL] {
        let documents = storeURL.appendingPathComponent("documents")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? []
        return names.sorted().map { documents.appendingPathComponent($0) }
    }

    /// A package tree of `members` (relative path → text); with `documentIdentifier`, an
    /// `Info.json` manifest naming the document and recording every member, as a Document saves.
    static func package(_ members: [String: String], documentIdentifier: String? = nil) throws -> FileWrapper {
        var tree = FileWrapper(directoryWithFileWrappers: [:])
        for (path, text) in members {
            set(&tree, path.split(separator: "/")[...], FileWrapper(regularFileWithContents: Data(text.utf8)))
        }
        if let documentIdentifier {
            var manifest = format.makeManifest(writer: writer, documentIdentifier: documentIdentifier)
            var hasher = MemberHasher()
            manifest.members = try hasher.memberRecords(of: tree, manifestName: "Info.json", packagePath: "(test package)")
            tree["Info.json"] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        }
        return tree
    }

    /// Puts `leaf` at the path `components` in `tree`, making folders on the way.
    static func set(_ tree: inout FileWrapper, _ components: ArraySlice<Substring>, _ leaf: FileWrapper) {
        let name = String(components.first!)
        if components.count == 1 {
            tree[name] = leaf
            return
        }
        var child = tree[name] ?? FileWrapper(directoryWithFileWrappers: [:])
        set(&child, components.dropFirst(), leaf)
        tree[name] = child
    }

    /// Writes a package at `relative`.
    @discardableResult
    func writePackage(_ relative: String, _ members: [String: String], documentIdentifier: String? = nil) throws -> URL {
        let url = item(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.package(members, documentIdentifier: documentIdentifier).write(to: url)
        return url
    }

    /// Writes a file at `relative`, dated `modified` when given.
    @discardableResult
    func writeFile(_ relative: String, _ text: String, modified: Date? = nil) throws -> URL {
        let url = item(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        if let modified { try setModified(url, modified) }
        return url
    }

    func setModified(_ url: URL, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
    }
}

/// Every member's text (the manifest left out), to compare packages by what a user wrote.
func texts(of url: URL) throws -> [String: String] {
    try contents(of: url).filter { $0.key != "Info.json" }.mapValues { String(decoding: $0, as: UTF8.self) }
}

/// `lstat` of `path`; fails the test when it can't.
func status(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> stat {
    var info = stat()
    guard lstat(path, &info) == 0 else {
        throw DocumentKitError(Errno(rawValue: errno), operation: .read, path: path, step: "lstat in a test")
    }
    return info
}

/// The inode of `path`.
func inode(_ path: String) throws -> UInt64 { UInt64(try status(path).st_ino) }

/// The parsed `record.json` of a stored version.
/// The version's record as it is now: its newest state entry's (format 3), else its entry's own.
func record(of version: FileVersion) throws -> [String: Any] {
    let entry = version.url.deletingLastPathComponent()
    let states = try FileManager.default.contentsOfDirectory(atPath: entry.deletingLastPathComponent().path)
        .filter { $0.hasPrefix(entry.lastPathComponent + ".state-") }.sorted()
    let holder = states.last.map { entry.deletingLastPathComponent().appendingPathComponent($0) } ?? entry
    let data = try Data(contentsOf: holder.appendingPathComponent("record.json"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// A fixed date, to the millisecond: 2026-03-04 05:06:07.890 UTC.
let fixedDate = Date(timeIntervalSince1970: 1_772_600_767.890)
