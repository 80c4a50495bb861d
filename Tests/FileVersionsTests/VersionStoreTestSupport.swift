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

    /// Keeps a version of `item` in `store` for each of `indices`, each moved in from a file of
    /// its own (`"\(text) \(index)"`), in that order.
    @discardableResult
    func addVersions(of item: URL, to store: VersionStore, _ indices: Range<Int>, text: String = "version") throws -> [FileVersion] {
        try indices.map { index in
            let source = try writeFile("source.txt", "\(text) \(index)")
            return try store.addVersion(ofItemAt: item, withContentsOf: source, byMoving: true)
        }
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

/// Fails each call of a versioned save in turn (a rehearsal counts them), each on a library of its
/// own from `makeLibrary` (the library, its item whose member `body.md` reads "v2" and has a
/// version "v1", and the tree to save, whose `body.md` reads "v3"); after each, the document is
/// one of the two states (the one before if the error says it is intact), the store lists no
/// problem, "v1" is kept, and "v2" too if "v3" is in place. `check` looks further (the call's
/// description, the library, the item, the listing).
func checkEveryFailingCallOfAVersionedSave(
    _ makeLibrary: () throws -> (VersionLibrary, URL, FileWrapper), requiringKeptVersion: Bool = true,
    check: (String, VersionLibrary, URL, VersionListing) throws -> Void = { _, _, _, _ in }
) throws {
    let (rehearsal, rehearsalItem, rehearsalTree) = try makeLibrary()
    let counter = FaultInjector()
    let counting = VersionStore(libraryURL: rehearsal.url, pruning: .keepAll, durability: .durable, fileSystem: counter.fileSystem)
    try counting.save(rehearsalTree, to: rehearsalItem, options: SaveOptions(fileSystem: counter.fileSystem), keepingReplacedAs: .save)
    let calls = counter.callCount
    #expect(calls > 30)
    for index in 1...calls {
        let (library, item, tree) = try makeLibrary()
        let faults = FaultInjector()
        faults.fail(call: index, with: .ioError)
        let store = VersionStore(libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: faults.fileSystem)
        let call = "call \(index) (\(counter.trace[index - 1]))"
        do {
            let (_, kept) = try store.save(tree, to: item, options: SaveOptions(fileSystem: faults.fileSystem), keepingReplacedAs: .save)
            if requiringKeptVersion { #expect(kept != nil, "\(call): saved without keeping the version") }
            #expect(try texts(of: item)["body.md"] == "v3", "\(call)")
        } catch let error as DocumentKitError {
            #expect(error.path == item.path, "\(call): \(error)")
            if error.originalIsIntact == true { #expect(try texts(of: item)["body.md"] == "v2", "\(call): \(error)") }
        }
        let listing = try library.store().versions(ofItemAt: item)
        #expect(listing.problems.isEmpty, "\(call): \(listing.problems)")
        let bodies = try Set(listing.others.map { try texts(of: $0.url)["body.md"] ?? "?" })
        let current = try texts(of: item)["body.md"]
        #expect(bodies.contains("v1"), "\(call): \(bodies)")
        if current == "v3" { #expect(bodies.contains("v2"), "\(call): the replaced state is lost") }
        try check(call, library, item, listing)
    }
}
