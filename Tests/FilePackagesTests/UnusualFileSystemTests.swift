#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import SystemPackage
import Testing

@testable import FilePackages

/// File systems without `RENAME_EXCHANGE` and without hard links (some FUSE, SMB), and what
/// recovery does when the name is taken again after an interrupted fallback swap.
@Suite struct UnusualFileSystemTests {
    @Test func withoutExchangeAndHardLinksPackageSavesSucceedAndLeaveThePackageWhole() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        let faults = FaultInjector(refusingExchange: true)
        faults.fail(.link, with: .notPermitted)
        let options = SaveOptions(fileSystem: faults.fileSystem)
        var original = samplePackage()
        original["attachments"]!["deep"]!["keep.txt"] = file("kept in a nested folder")
        _ = try original.write(to: url, options: options)
        for round in 1...3 {
            var tree = try FileWrapper(contentsOf: url, fileSystem: faults.fileSystem)
            tree["body.md"] = file("body \(round)")  // the other members are unchanged: copied, not linked
            _ = try tree.write(to: url, options: options)
        }
        #expect(faults.trace.contains { $0.call == .link && $0.injected == .notPermitted })
        let saved = try FileWrapper(contentsOf: url)
        #expect(try text(saved["body.md"]) == "body 3")
        #expect(try text(saved["attachments"]?["deep"]?["keep.txt"]) == "kept in a nested folder")
        var expected = original
        expected["body.md"] = file("body 3")
        #expect(try snapshot(url) == snapshotOf(expected, in: dir, named: "expected.pkg"))
        #expect(litter(in: dir.url).isEmpty)
    }

    @Test func anItemMadeAgainAfterAnInterruptedFallbackSwapKeepsTheSavesTreesUnderVisibleNames() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        var acknowledged = samplePackage()
        acknowledged["body.md"] = file("the acknowledged body")
        _ = try acknowledged.write(to: url)
        var tree = try FileWrapper(contentsOf: url)
        tree["body.md"] = file("the interrupted save's body")
        // Fail the rename that brings the new tree in, and the rename back: the state a crash
        // between the two renames leaves (the name missing, both trees aside, the intent).
        // The same save made in another folder finds the call to fail.
        let probe = FaultInjector(refusingExchange: true)
        let probeDir = try TemporaryDirectory()
        let probeURL = probeDir.appending("Doc.pkg")
        _ = try acknowledged.write(to: probeURL)
        var probeTree = try FileWrapper(contentsOf: probeURL)
        probeTree["body.md"] = file("the interrupted save's body")
        _ = try probeTree.write(to: probeURL, options: SaveOptions(fileSystem: probe.fileSystem))
        let renameIn = try #require(probe.trace.enumerated().first { $0.element.call == .rename && $0.element.name == "Doc.pkg" })
        let faults = FaultInjector(refusingExchange: true)
        faults.fail(call: renameIn.offset + 1, with: .ioError)
        faults.fail(call: renameIn.offset + 2, with: .ioError)
        #expect(throws: DocumentKitError.self) { try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem)) }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(litter(in: dir.url).contains(".Doc.pkg.dk-intent"))

        // Another program makes a new item under the name, without DocumentKit (`mkdir`).
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try put("a new document", at: url.appendingPathComponent("body.md"))

        // The next open in the folder completes the intent: the new item stays, and neither of
        // the interrupted save's trees is removed.
        let reopened = try FileWrapper(contentsOf: url)
        #expect(try text(reopened["body.md"]) == "a new document")
        let names = try dir.contents()
        #expect(litter(in: dir.url).isEmpty)
        let newCopy = try #require(names.first { $0.hasPrefix("Doc (recovered ") && $0.hasSuffix(").pkg") && !$0.contains("previous") })
        let oldCopy = try #require(names.first { $0.hasPrefix("Doc (recovered ") && $0.hasSuffix(", previous).pkg") })
        #expect(try text(FileWrapper(contentsOf: dir.appending(newCopy))["body.md"]) == "the interrupted save's body")
        #expect(try text(FileWrapper(contentsOf: dir.appending(oldCopy))["body.md"]) == "the acknowledged body")
        #expect(names.count == 3)
    }

    @Test func recoveryNamesAreVisibleAndKeepTheExtension() {
        #expect(InterruptedSaveRecovery.recoveryName(for: "T.note", label: "2026-01-02 030405") == "T (recovered 2026-01-02 030405).note")
        #expect(InterruptedSaveRecovery.recoveryName(for: "Folder", label: "x") == "Folder (recovered x)")
        #expect(InterruptedSaveRecovery.recoveryName(for: "a.b.pkg", label: "x") == "a.b (recovered x).pkg")
        #expect(InterruptedSaveRecovery.recoveryStamp().count == "2026-01-02 030405".count)
    }

    /// What `tree` looks like on disk when written normally (to compare a save's result with).
    private func snapshotOf(_ tree: FileWrapper, in dir: TemporaryDirectory, named name: String) throws -> [String: DiskEntry] {
        let url = dir.appending(name)
        _ = try tree.write(to: url)
        defer { try? FileItem.remove(at: url) }
        return snapshot(url)
    }
}
