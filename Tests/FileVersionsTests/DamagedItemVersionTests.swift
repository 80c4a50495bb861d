import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The store when the item or the store itself is damaged: a manifest whose identifier can't be
/// read, members that don't match their manifest, a damaged `store.json`. The versions stay
/// listable and restorable, and what was wrong is reported.
@Suite("Versions of damaged items and stores", .timeLimit(.minutes(2)))
struct DamagedItemVersionTests {
    struct ManifestDamage: Sendable, CustomStringConvertible {
        var description: String
        var damage: @Sendable (Data) -> Data
    }

    static let manifestDamages: [ManifestDamage] = [
        ManifestDamage(description: "truncated") { $0.prefix($0.count / 2) },
        ManifestDamage(description: "not JSON") { _ in Data("not json at all\n".utf8) },
        ManifestDamage(description: "an identifier that is not a string") { data in
            let text = String(decoding: data, as: UTF8.self)
                .replacingOccurrences(of: "\"documentIdentifier\" : \"DOC\"", with: "\"documentIdentifier\" : 42")
            return Data(text.utf8)
        },
    ]

    /// `doc.note` (document `DOC`) saved three times: two versions kept; returns the library, the
    /// item and the kept versions' ids, newest first.
    static func documentWithVersions() throws -> (VersionLibrary, URL, [String]) {
        let library = try VersionLibrary()
        let item = try library.writePackage("doc.note", ["body.md": "one"], documentIdentifier: "DOC")
        let store = library.store()
        for text in ["two", "three"] {
            try store.save(try VersionLibrary.package(["body.md": text], documentIdentifier: "DOC"), to: item, keepingReplacedAs: .save)
        }
        let ids = try store.versions(ofItemAt: item).others.map(\.persistentIdentifier)
        #expect(ids.count == 2)
        return (library, item, ids)
    }

    @Test("A package whose manifest can't be read lists its versions by its name and says so", arguments: manifestDamages)
    func versionsByName(_ damage: ManifestDamage) throws {
        let (library, item, ids) = try Self.documentWithVersions()
        let manifest = item.appendingPathComponent("Info.json")
        try damage.damage(try Data(contentsOf: manifest)).write(to: manifest)
        // Another document with versions, once named otherwise, is not listed.
        let other = try library.writePackage("other.note", ["body.md": "x"], documentIdentifier: "OTHER")
        try library.store().save(try VersionLibrary.package(["body.md": "y"], documentIdentifier: "OTHER"), to: other, keepingReplacedAs: .save)

        let listing = try library.store().versions(ofItemAt: item)
        #expect(listing.identification == .name)
        #expect(listing.others.map(\.persistentIdentifier) == ids)
        let problem = try #require(listing.problems.first)
        #expect(listing.problems.count == 1)
        #expect(problem.path == manifest.path)
        #expect(problem.detail?.contains("doc.note") == true, "\(problem)")
        #expect(try texts(of: try #require(listing.others.last).url)["body.md"] == "one")
        #expect(try library.store().versions(ofItemAt: other).identification == .documentIdentifier)
    }

    @Test("Restoring over a package whose manifest can't be read keeps the damaged package as a version of its document")
    func restoreOverDamagedManifest() throws {
        let (library, item, ids) = try Self.documentWithVersions()
        let manifest = item.appendingPathComponent("Info.json")
        let damaged = Data("{\"format\": ".utf8)
        try damaged.write(to: manifest)
        let store = library.store()
        let oldest = try #require(try store.versions(ofItemAt: item).others.first { $0.persistentIdentifier == ids[1] })
        try store.replaceItem(at: item, with: oldest)

        #expect(try texts(of: item)["body.md"] == "one")
        let listing = try store.versions(ofItemAt: item)
        #expect(listing.identification == .documentIdentifier && listing.problems.isEmpty)
        #expect(listing.others.count == 3)
        let kept = try listing.others.compactMap { version in try contents(of: version.url)["Info.json"] }
        #expect(kept.contains(damaged), "the damaged package is not among the versions")
    }

    @Test("A package whose members don't match its manifest is kept as a version of its own, not as the one its manifest names")
    func mismatchedMembersAreKept() throws {
        let library = try VersionLibrary()
        let item = try library.writePackage("doc.note", ["body.md": "one"], documentIdentifier: "DOC")
        let store = library.store()
        let first = try store.addVersion(ofItemAt: item)
        // Another program appends to a member; the manifest is unchanged.
        let handle = try FileHandle(forWritingTo: item.appendingPathComponent("body.md"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\nappended".utf8))
        try handle.close()

        let kept = try #require(try store.save(try VersionLibrary.package(["body.md": "two"], documentIdentifier: "DOC"), to: item, keepingReplacedAs: .save).kept)
        #expect(kept.persistentIdentifier != first.persistentIdentifier)
        #expect(try texts(of: kept.url)["body.md"] == "one\nappended")
        #expect(try texts(of: first.url)["body.md"] == "one")
    }

    @Test("A damaged store.json is rebuilt from the entries and kept aside; every version stays listable and restorable")
    func damagedStoreDescriptionIsRebuilt() throws {
        let (library, item, ids) = try Self.documentWithVersions()
        let file = try library.writeFile("todo.txt", "first")
        try library.store().addVersion(ofItemAt: file)
        try library.writeFile("todo.txt", "second")
        let storeFile = library.storeURL.appendingPathComponent("store.json")
        let description = try Data(contentsOf: storeFile)
        let garbage = Data("{\n  \"format\" : \"org.documentkit.ver".utf8)
        try garbage.write(to: storeFile)

        let store = library.store()
        #expect(try store.versions(ofItemAt: item).others.map(\.persistentIdentifier) == ids)
        #expect(try Data(contentsOf: storeFile) == description)
        let aside = try FileManager.default.contentsOfDirectory(atPath: library.storeURL.path).filter { $0.hasPrefix("store.json.damaged-") }
        #expect(aside.count == 1)
        #expect(try Data(contentsOf: library.storeURL.appendingPathComponent(try #require(aside.first))) == garbage)

        let fileVersions = try store.versions(ofItemAt: file).others
        #expect(fileVersions.count == 1)
        try store.replaceItem(at: file, with: try #require(fileVersions.first))
        #expect(try String(contentsOf: file, encoding: .utf8) == "first")
        let oldest = try #require(try store.versions(ofItemAt: item).others.last)
        try store.replaceItem(at: item, with: oldest)
        #expect(try texts(of: item)["body.md"] == "one")
        // Garbage again, and a writer this time: it repairs it too.
        try Data([0xFF, 0x00]).write(to: storeFile)
        try library.writeFile("todo.txt", "third")
        try library.store().addVersion(ofItemAt: file)
        #expect(try Data(contentsOf: storeFile) == description)
        #expect(try library.store().versions(ofItemAt: file).others.count == 3)
    }
}
