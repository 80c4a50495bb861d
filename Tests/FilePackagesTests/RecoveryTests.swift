#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import SystemPackage
import Testing

@testable import FilePackages

@Suite struct RecoveryTests {
    enum Trigger: String, CaseIterable, CustomTestStringConvertible {
        case read, save
        var testDescription: String { rawValue }

        /// Reads or saves the package at `url` (saving `tree`, or the sample package).
        func run(_ url: URL, tree: FileWrapper? = nil) throws {
            switch self {
            case .read: _ = try FileWrapper(contentsOf: url)
            case .save: try (tree ?? samplePackage()).write(to: url)
            }
        }
    }

    private func makeLitterPackage(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try put("half-written", at: url.appendingPathComponent("sub/member.txt"))
    }

    @Test("litter of a dead save is removed at the next read or save", arguments: Trigger.allCases)
    func litterRemoved(trigger: Trigger) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let new = TemporaryName.make(for: "Doc.pkg", purpose: "new")
        let old = TemporaryName.make(for: "Doc.pkg", purpose: "old")
        let tmp = TemporaryName.make(for: "note.txt", purpose: "tmp")
        let tmpLink = TemporaryName.make(for: "Doc.pkg", purpose: "tmp")
        #expect(new.hasPrefix(".Doc.pkg.dk-new-") && new.count == ".Doc.pkg.dk-new-".count + 12)
        try makeLitterPackage(dir.appending(new))
        try makeLitterPackage(dir.appending(old))
        try put("half", at: dir.appending(tmp))
        try FileManager.default.createSymbolicLink(atPath: dir.appending(tmpLink).path, withDestinationPath: "Doc.pkg")
        // Names that only look similar are not DocumentKit's and stay.
        let lookalikes = [".Doc.pkg.dk-new-short", "Doc.pkg.dk-new-abcdefghijkm", ".Doc.pkg.dk-new-abcdefghijkmn", "notes.dk-old"]
        for name in lookalikes { try put("mine", at: dir.appending(name)) }
        try trigger.run(url)
        #expect(try dir.contents() == (["Doc.pkg"] + lookalikes).sorted())
        #expect(try FileWrapper(contentsOf: url) == samplePackage())
    }

    @Test("litter added within the same timestamp tick as the last clean read is still found")
    func litterWithinOneTimestampTick() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        _ = try FileWrapper(contentsOf: url)  // the folder is seen clean
        let before = status(dir.url)
        let litterName = TemporaryName.make(for: "Doc.pkg", purpose: "new")
        try makeLitterPackage(dir.appending(litterName))
        // A coarse clock (ext4 uses the jiffy) gives the folder the same time as before.
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, dir.url.path, &times, 0) == 0)
        _ = try FileWrapper(contentsOf: url)
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    @Test("a temporary item locked by a live process is left alone until the lock goes", arguments: Trigger.allCases)
    func lockedTemporaryItemIsKept(trigger: Trigger) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let busyFolder = TemporaryName.make(for: "Doc.pkg", purpose: "new")
        let busyFile = TemporaryName.make(for: "Doc.pkg", purpose: "tmp")
        try makeLitterPackage(dir.appending(busyFolder))
        try put("being written", at: dir.appending(busyFile))
        // Another open file description of each, locked as a saving process would.
        let folderFD = open(dir.appending(busyFolder).path, O_RDONLY | O_DIRECTORY)
        let fileFD = open(dir.appending(busyFile).path, O_RDONLY)
        #expect(folderFD >= 0 && fileFD >= 0)
        #expect(flock(folderFD, LOCK_EX) == 0 && flock(fileFD, LOCK_EX) == 0)
        try trigger.run(url)
        try trigger.run(url)
        #expect(try dir.contents() == [busyFile, busyFolder, "Doc.pkg"].sorted())
        #expect(read(dir.appending(busyFolder + "/sub/member.txt")) == "half-written")
        close(folderFD)
        close(fileFD)
        try trigger.run(url)
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    enum CrashState: String, CaseIterable, CustomTestStringConvertible {
        /// Intent written, nothing renamed yet.
        case intentOnly
        /// Old tree renamed aside, new one not yet renamed in.
        case nameMissingNewAndOldPresent
        /// Name missing and only the new tree there (the old one was already cleaned up).
        case nameMissingOnlyNewPresent
        /// Name missing and only the old tree there (the new one was lost before the swap).
        case nameMissingOnlyOldPresent
        /// New tree renamed in, old one still aside.
        case namePresentOldPresent
        var testDescription: String { rawValue }
    }

    /// Leaves `Doc.pkg` in `dir` as a fallback swap cut off in `state` left it (its intent
    /// written); returns the tree recovery must give the item. The trees are built elsewhere and
    /// moved in, so that no recovery runs while the state is set up.
    private func placeInterruptedSwap(_ state: CrashState, in dir: TemporaryDirectory) throws -> FileWrapper {
        let intent = RenameIntent(
            newName: TemporaryName.make(for: "Doc.pkg", purpose: "new"),
            oldName: TemporaryName.make(for: "Doc.pkg", purpose: "old"))
        let oldTree = samplePackage()
        var newTree = samplePackage()
        newTree["body.md"] = file("the new body")
        let staging = try TemporaryDirectory()
        try oldTree.write(to: staging.appending("old"))
        try newTree.write(to: staging.appending("new"))
        func place(_ tree: String, as name: String) {
            #expect(rename(staging.appending(tree).path, dir.appending(name).path) == 0)
        }
        switch state {
        case .intentOnly:
            place("old", as: "Doc.pkg")
            place("new", as: intent.newName)
        case .nameMissingNewAndOldPresent:
            place("old", as: intent.oldName)
            place("new", as: intent.newName)
        case .nameMissingOnlyNewPresent:
            place("new", as: intent.newName)
        case .nameMissingOnlyOldPresent:
            place("old", as: intent.oldName)
        case .namePresentOldPresent:
            place("new", as: "Doc.pkg")
            place("old", as: intent.oldName)
        }
        try intent.data.write(to: dir.appending(".Doc.pkg.dk-intent"))
        return switch state {
        case .intentOnly, .nameMissingOnlyOldPresent: oldTree
        case .nameMissingNewAndOldPresent, .nameMissingOnlyNewPresent, .namePresentOldPresent: newTree
        }
    }

    @Test("an interrupted fallback swap is completed from its intent, and the item is never missing",
          arguments: CrashState.allCases, Trigger.allCases)
    func intentRecovery(state: CrashState, trigger: Trigger) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        let expected = try placeInterruptedSwap(state, in: dir)
        switch trigger {
        case .read:
            #expect(try FileWrapper(contentsOf: url) == expected)
        case .save:
            // A save of an unrelated tree first finds the item in its recovered state.
            var next = expected
            next["saved.txt"] = file("saved")
            try next.write(to: url)
            #expect(try text(FileWrapper(contentsOf: url)["body.md"]) == (try text(expected["body.md"])))
            #expect(try FileWrapper(contentsOf: url)["saved.txt"] != nil)
        }
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    /// Fills `dir` with `count` files until its size is past ``LeftoverCleaner/largeFolderSize``.
    private func makeLarge(_ dir: TemporaryDirectory) throws {
        var number = 0
        while status(dir.url).st_size <= LeftoverCleaner.largeFolderSize {
            for _ in 0..<500 {
                try put("", at: dir.appending(String(format: "document-with-a-long-enough-name-%06d.txt", number)))
                number += 1
            }
        }
    }

    @Test("in a large folder, a read or save completes the item's own interrupted swap without listing the folder",
          arguments: CrashState.allCases, Trigger.allCases)
    func intentRecoveryInLargeFolder(state: CrashState, trigger: Trigger) throws {
        let dir = try TemporaryDirectory()
        try makeLarge(dir)
        let url = dir.appending("Doc.pkg")
        // No whole-folder pass by chance (one open or save in 64) until the end: every step here
        // reads or saves in the large folder.
        try LeftoverCleaner.$largeFolderSweepOdds.withValue(0) {
            let expected = try placeInterruptedSwap(state, in: dir)
            // Litter of another item: left to the occasional pass over the folder.
            let other = TemporaryName.make(for: "Other.pkg", purpose: "new")
            try makeLitterPackage(dir.appending(other))

            let faults = FaultInjector()
            switch trigger {
            case .read: #expect(try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem) == expected)
            case .save: try expected.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
            }
            #expect(!faults.trace.contains { $0.call == .listDirectory && $0.name == dir.url.path })
            #expect(try FileWrapper(contentsOf: url) == expected || trigger == .save)
            let left = try dir.contents().filter { $0.hasPrefix(".") }
            #expect(left == [other])
        }

        // A pass over the whole folder (one open in 64) removes the rest.
        try LeftoverCleaner.$largeFolderSweepOdds.withValue(1) { _ = try FileWrapper(contentsOf: url) }
        #expect(try dir.contents().filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test("a save whose fallback swap and its undo both failed is rolled forward at the next open")
    func undoFailedThenRecovered() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        var tree = try FileWrapper(contentsOf: url)
        tree["body.md"] = file("the new body")
        // Find the rename that brings the new tree in, then fail it and the rename back.
        let probe = FaultInjector(refusingExchange: true)
        let probeDir = try TemporaryDirectory()
        let probeURL = probeDir.appending("Doc.pkg")
        try samplePackage().write(to: probeURL)
        var probeTree = try FileWrapper(contentsOf: probeURL)
        probeTree["body.md"] = file("the new body")
        try probeTree.write(to: probeURL, options: SaveOptions(fileSystem: probe.fileSystem))
        let renames = probe.trace.enumerated().filter { $0.element.call == .rename }
        let renameIn = try #require(renames.first { $0.element.name == "Doc.pkg" })
        let faults = FaultInjector(refusingExchange: true)
        faults.fail(call: renameIn.offset + 1, with: .ioError)
        faults.fail(call: renameIn.offset + 2, with: .ioError)
        let error = #expect(throws: DocumentKitError.self) {
            try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
        }
        #expect(error?.originalIsIntact == false)
        #expect(error?.description.contains(url.path) == true)
        #expect(!FileManager.default.fileExists(atPath: url.path))  // the state a crash would leave
        #expect(litter(in: dir.url).contains(".Doc.pkg.dk-intent"))
        let recovered = try FileWrapper(contentsOf: url)
        #expect(try text(recovered["body.md"]) == "the new body")
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    @Test("a malformed intent is reported as corruptData naming the item, and nothing is touched",
          arguments: ["garbage", "DocumentKit rename intent 1\nnew=.Doc.pkg.dk-new-abcdefghijkm\n",
                      "DocumentKit rename intent 1\nnew=../../etc\nold=.Doc.pkg.dk-old-abcdefghijkm\n",
                      "DocumentKit rename intent 1\nnew=.Other.dk-new-abcdefghijkm\nold=.Other.dk-old-abcdefghijkm\n",
                      "DocumentKit rename intent 1\nnew=.Doc.pkg.dk-new-a/../../x\nold=.Doc.pkg.dk-old-abcdefghijkm\n",
                      ""])
    func malformedIntent(contents: String) throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        try put(contents, at: dir.appending(".Doc.pkg.dk-intent"))
        let before = snapshot(dir.url)
        for trigger in Trigger.allCases {
            let error = #expect(throws: DocumentKitError.self) { try trigger.run(url) }
            #expect(error?.code == .corruptData)
            #expect(error?.description.contains(url.path) == true)
            #expect(error?.description.contains(".Doc.pkg.dk-intent") == true)
        }
        #expect(snapshot(dir.url) == before)
    }

    @Test("an intent locked by a live save is left alone, with the temporary items it names")
    func lockedIntentIsKept() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        let intent = RenameIntent(
            newName: TemporaryName.make(for: "Doc.pkg", purpose: "new"),
            oldName: TemporaryName.make(for: "Doc.pkg", purpose: "old"))
        let staging = try TemporaryDirectory()
        try samplePackage().write(to: staging.appending("old"))
        try samplePackage().write(to: staging.appending("new"))
        #expect(rename(staging.appending("old").path, dir.appending(intent.oldName).path) == 0)
        #expect(rename(staging.appending("new").path, dir.appending(intent.newName).path) == 0)
        let intentURL = dir.appending(".Doc.pkg.dk-intent")
        try intent.data.write(to: intentURL)
        let fd = open(intentURL.path, O_RDONLY)
        #expect(flock(fd, LOCK_EX) == 0)
        #expect(throws: DocumentKitError.self) { try FileWrapper(contentsOf: url) }  // not there yet: notFound
        #expect(try dir.contents() == [intent.newName, intent.oldName, ".Doc.pkg.dk-intent"].sorted())
        close(fd)
        #expect(try FileWrapper(contentsOf: url) == samplePackage())
        #expect(try dir.contents() == ["Doc.pkg"])
    }
}
