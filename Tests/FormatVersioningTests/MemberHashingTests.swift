import DocumentKitSystem
import DocumentKitTesting
import FilePackages
import Foundation
import FormatVersioning
import Testing

@Suite struct MemberHashingTests {
    @Test("records are the size and SHA-256 of every regular file, by path, except the manifest")
    func records() throws {
        let tree = FileWrapper(directoryWithFileWrappers: [
            "Info.json": file("{}"),
            "empty.txt": file(""),
            "folder": FileWrapper(directoryWithFileWrappers: [
                "abc.txt": file("abc"),
                "Info.json": file("a nested file of the same name is a member"),
                "inner": FileWrapper(directoryWithFileWrappers: [:]),
            ]),
            "link": FileWrapper(symbolicLinkWithDestination: "folder/abc.txt"),
        ])
        var hasher = MemberHasher()
        let records = try hasher.memberRecords(of: tree, manifestName: "Info.json", packagePath: "/p")
        #expect(Set(records.keys) == ["empty.txt", "folder/abc.txt", "folder/Info.json"])
        // FIPS 180-2 test vectors.
        #expect(records["empty.txt"] == MemberRecord(size: 0, sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(records["folder/abc.txt"] == MemberRecord(size: 3, sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(hasher.hashedFileCount == 3)
    }

    @Test("a large member on disk is hashed in pieces to the same digest as in memory")
    func largeMemberStreamed() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Large.sketch")
        let bytes = Data((0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try FileWrapper(directoryWithFileWrappers: ["large.bin": FileWrapper(regularFileWithContents: bytes)]).write(to: url)
        var onDisk = MemberHasher()
        let streamed = try onDisk.memberRecords(of: FileWrapper(contentsOf: url), manifestName: "Info.json", packagePath: url.path)
        var inMemory = MemberHasher()
        let whole = try inMemory.memberRecords(
            of: FileWrapper(directoryWithFileWrappers: ["large.bin": FileWrapper(regularFileWithContents: bytes)]),
            manifestName: "Info.json", packagePath: "/memory")
        #expect(streamed == whole)
        #expect(streamed["large.bin"]?.size == Int64(bytes.count))
    }

    @Test("a save of a 10,000-file package with one change hashes one file")
    func reuseAcrossSaves() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("Big.sketch")
        var children: [String: FileWrapper] = [:]
        for index in 0..<10_000 { children[String(format: "f%05d.txt", index)] = file("member \(index)\n") }
        var manifest = Sketchbook.format().makeManifest(writer: Sketchbook.writer)
        var first = MemberHasher()
        var tree = FileWrapper(directoryWithFileWrappers: children)
        manifest.members = try first.memberRecords(of: tree, manifestName: "Info.json", packagePath: url.path)
        tree["Info.json"] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        try tree.write(to: url, options: SaveOptions(durability: .consistent))

        // Open: verification reads every member once.
        var hasher = MemberHasher()
        let opened = try FileWrapper(contentsOf: url)
        let verification = try hasher.verify(opened, against: manifest, manifestName: "Info.json", packagePath: url.path)
        #expect(verification.isComplete && verification.matchingCount == 10_000)
        #expect(hasher.hashedFileCount == 10_000)

        // Save with one member changed: one file hashed.
        var edited = opened
        edited["f00042.txt"] = file("changed\n")
        let previous = manifest.members
        manifest.members = try hasher.memberRecords(of: edited, manifestName: "Info.json", previous: previous, packagePath: url.path)
        #expect(hasher.hashedFileCount == 10_001)
        #expect(manifest.members?["f00042.txt"]?.size == 8)
        edited["Info.json"] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        let saved = try edited.write(to: url, options: SaveOptions(durability: .consistent))
        hasher.rememberDigests(of: saved, members: manifest.members!)

        // The next save from the saved tree, and a fresh read of the package, hash nothing.
        #expect(try hasher.memberRecords(of: saved, manifestName: "Info.json", previous: manifest.members, packagePath: url.path)
            == manifest.members)
        #expect(hasher.hashedFileCount == 10_001)
        let reread = try FileWrapper(contentsOf: url)
        let check = try hasher.verify(reread, against: manifest, manifestName: "Info.json", packagePath: url.path)
        #expect(check.isComplete)
        #expect(hasher.hashedFileCount == 10_001)
    }

    @Test("an unchanged member keeps its record whole, fields of newer versions included; a changed one gets a new record")
    func carryOverRecords() throws {
        let tree = FileWrapper(directoryWithFileWrappers: ["same.txt": file("abc"), "changed.txt": file("new")])
        let sameDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let previous: [String: MemberRecord] = [
            "same.txt": MemberRecord(size: 3, sha256: sameDigest, additionalFields: ["compression": RawJSONValue(string: "none")]),
            "changed.txt": MemberRecord(size: 3, sha256: String(repeating: "0", count: 64), additionalFields: ["compression": RawJSONValue(string: "lz4")]),
        ]
        var hasher = MemberHasher()
        let records = try hasher.memberRecords(of: tree, manifestName: "Info.json", previous: previous, packagePath: "/p")
        #expect(records["same.txt"] == previous["same.txt"])
        #expect(records["changed.txt"]?.additionalFields.isEmpty == true)
        #expect(records["changed.txt"]?.sha256 != previous["changed.txt"]?.sha256)
    }

    @Test("a package whose members match its manifest is complete")
    func complete() throws {
        let verification = try Fixtures.verification(of: "complete.sketch")
        #expect(verification.isComplete)
        #expect(verification.listedCount == 5 && verification.matchingCount == 5)
        #expect(verification.unlistedMembers.isEmpty)
        try verification.checkComplete()
    }

    @Test("a missing member makes the package incomplete, named in the error")
    func missingMember() throws {
        let verification = try Fixtures.verification(of: "missing-member.sketch")
        #expect(verification.missingMembers == ["attachments/photo.bin"])
        #expect(verification.mismatchedMembers.isEmpty)
        let changed = try #require(verification.lastChange)
        let error = #expect(throws: DocumentKitError.self) { try verification.checkComplete(at: changed) }
        #expect(error?.code == .incompletePackage)
        #expect(error?.path == verification.path)
        #expect(error?.description.contains("4 of 5 members match its manifest; missing: “attachments/photo.bin”") == true)
    }

    @Test("a member with the listed size but other contents makes the package incomplete")
    func wrongHash() throws {
        let verification = try Fixtures.verification(of: "wrong-hash.sketch")
        #expect(verification.mismatchedMembers == ["body.md"])
        #expect(verification.matchingCount == 4)
    }

    @Test("a package a sync delivered half-way: “3 of 5 members match”, which are missing and which differ")
    func incomplete() throws {
        let verification = try Fixtures.verification(of: "incomplete.sketch")
        let changed = try #require(verification.lastChange)
        let error = #expect(throws: DocumentKitError.self) { try verification.checkComplete(at: changed.addingTimeInterval(5)) }
        #expect(error?.description == "Couldn't open “\(verification.path)”: The package is incomplete: 3 of 5 members match its manifest; "
            + "missing: “attachments/photo.bin”; different: “attachments/ticket.txt”. A sync may still be delivering it (it changed 5 s ago): "
            + "wait until nothing in it has changed for 60 s, and open it again. The original is unchanged.")
        #expect(error?.lastCompleteVersionPath == nil)
    }

    @Test("an incomplete package left alone for the settle period is a settled edit by another program, not a delivery")
    func settledMismatch() throws {
        let verification = try Fixtures.verification(of: "wrong-hash.sketch")
        let changed = try #require(verification.lastChange)
        #expect(!verification.isSettled(at: changed.addingTimeInterval(59)))
        #expect(verification.isSettled(at: changed.addingTimeInterval(60)))
        #expect(verification.isSettled(at: changed.addingTimeInterval(2), settlePeriod: .seconds(1)))
        let delivering = #expect(throws: DocumentKitError.self) { try verification.checkComplete(at: changed.addingTimeInterval(59)) }
        #expect(delivering?.code == .incompletePackage)
        let settled = #expect(throws: DocumentKitError.self) { try verification.checkComplete(at: changed.addingTimeInterval(60)) }
        #expect(settled?.code == .modifiedPackage)
        #expect(settled?.description.contains("different: “body.md”") == true)
        #expect(settled?.description.contains("an edit by another program") == true)
        #expect(settled?.description.contains("still be delivering") == false)
    }

    @Test("members the manifest doesn't list, such as a sync engine's conflict copy, are allowed and reported")
    func unlistedAllowed() throws {
        let verification = try Fixtures.verification(of: "with-conflict-copy.sketch")
        #expect(verification.isComplete)
        #expect(verification.unlistedMembers == ["body.sync-conflict-20261122-101500-7KQ2XBN.md"])
    }

    @Test("a listed member of the wrong kind or size is different, and is not read")
    func wrongKindOrSize() throws {
        let (tree, manifest, path) = try Fixtures.package("complete.sketch")
        var changed = tree
        changed["body.md"] = FileWrapper(directoryWithFileWrappers: [:])
        changed["layers"] = FileWrapper(directoryWithFileWrappers: [
            "background.json": file("a different size"), "ink.json": tree.fileWrapper(atPath: "layers/ink.json")!,
        ])
        var hasher = MemberHasher()
        let verification = try hasher.verify(changed, against: manifest, manifestName: "Info.json", packagePath: path)
        #expect(verification.mismatchedMembers == ["body.md", "layers/background.json"])
        #expect(hasher.hashedFileCount == 3)
    }

    @Test("a manifest without a member list verifies as complete, listing nothing")
    func noMemberList() throws {
        let url = Fixtures.notes.appendingPathComponent("empty.note")
        let tree = try FileWrapper(contentsOf: url)
        let manifest = try DocumentManifest(package: tree, manifestName: "Info.json", packagePath: url.path)
        var hasher = MemberHasher()
        let verification = try hasher.verify(tree, against: manifest, manifestName: "Info.json", packagePath: url.path)
        #expect(verification.isComplete && !verification.hasMemberList && verification.listedCount == 0)
        #expect(hasher.hashedFileCount == 0)
    }
}
