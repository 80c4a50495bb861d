#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import SystemPackage
import Testing

@testable import FilePackages

/// A save to run with a failure injected at each of its system calls in turn.
enum FaultScenario: String, CaseIterable, CustomTestStringConvertible {
    case replacePackage, newPackage, replaceFile, newFile

    var testDescription: String { rawValue }
    var documentName: String { self == .replacePackage || self == .newPackage ? "Doc.pkg" : "note.txt" }

    /// Puts the original in `folder` (with the real file system) and returns the document's URL
    /// and the tree to save over it.
    func prepare(in directory: URL) throws -> (url: URL, tree: FileWrapper) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(documentName)
        switch self {
        case .replacePackage:
            var original = samplePackage()
            original["attachments"]!["deep"]!["keep.txt"] = file("kept in a nested folder")
            original["link"] = FileWrapper(symbolicLinkWithDestination: "body.md")
            try original.write(to: url, options: SaveOptions(durability: .consistent))
            var tree = try FileWrapper(contentsOf: url)
            tree["body.md"] = file("the new body")  // changed
            tree["Info.json"] = nil  // removed
            tree["attachments"]!["deep"]!["b.txt"] = file("new B")  // changed, nested
            tree["attachments"]!["c.txt"] = file("added")  // added
            tree["attachments"]!["deep"]!["deeper"] = folder(["d.txt": file("D")])  // added folder
            return (url, tree)  // a.txt and deep/keep.txt unchanged: hard-linked
        case .newPackage:
            return (url, samplePackage())
        case .replaceFile:
            try put("the original file", at: url)
            return (url, file("the new contents"))
        case .newFile:
            return (url, file("the new contents"))
        }
    }
}

@Suite struct FaultInjectionTests {
    static let errnos: [Errno] = [.ioError, .noSpace, .improperLink, .permissionDenied, .readOnlyFileSystem]

    /// Counts the calls of a save that fails nothing, and records what it leaves on disk.
    private func cleanRun(_ scenario: FaultScenario, refusingExchange: Bool, in base: URL)
        throws -> (count: Int, expected: [String: DiskEntry], trace: [FaultInjector.Call])
    {
        let (url, tree) = try scenario.prepare(in: base.appendingPathComponent("clean"))
        let faults = FaultInjector(refusingExchange: refusingExchange)
        faults.reset()
        try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
        #expect(faults.trace.allSatisfy { $0.injected == nil })
        return (faults.callCount, snapshot(url), faults.trace)
    }

    @Test("a failure at any step leaves the original whole, or the new version whole",
          arguments: FaultScenario.allCases, [false, true])
    func failureAtEveryStep(scenario: FaultScenario, refusingExchange: Bool) throws {
        let base = try fastTemporaryDirectory()
        let (count, expected, trace) = try cleanRun(scenario, refusingExchange: refusingExchange, in: base.url)
        #expect(count > 5)
        var thrown = 0
        var returned = 0
        for k in 1...count {
            for injected in Self.errnos {
                let folder = base.appending("run-\(k)-\(injected.rawValue)")
                let (url, tree) = try scenario.prepare(in: folder)
                let original = snapshot(url)
                let faults = FaultInjector(refusingExchange: refusingExchange)
                faults.fail(call: k, with: injected)
                let context = "call \(k) \(trace[k - 1]) failing with \(injected.readableDescription)"
                do {
                    try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
                    returned += 1
                    #expect(snapshot(url) == expected, "save returned but the new version is not whole: \(context)")
                    // Whatever cleanup failed is finished at the next read.
                    _ = try FileWrapper(contentsOf: url)
                    #expect(litter(in: folder).isEmpty, "litter after the next read: \(context)")
                } catch {
                    thrown += 1
                    #expect(error.description.contains(url.path), "\(context): \(error)")
                    #expect(error.step != nil, "\(context): \(error)")
                    #expect(error.errno == injected, "\(context): \(error)")
                    #expect(error.description.contains(injected.readableDescription), "\(context): \(error)")
                    #expect(error.originalIsIntact != false, "\(context): \(error)")
                    #expect(snapshot(url) == original, "original changed: \(context): \(error)")
                    #expect(litter(in: folder).isEmpty, "litter \(litter(in: folder)): \(context): \(error)")
                }
                try? FileManager.default.removeItem(at: folder)
            }
        }
        #expect(thrown > count, "most failures should make the save fail (\(thrown) of \(count * Self.errnos.count))")
        #expect(returned + thrown == count * Self.errnos.count)
    }

    @Test("EINTR at any step is retried and the save succeeds", arguments: FaultScenario.allCases, [false, true])
    func interruptedAtEveryStep(scenario: FaultScenario, refusingExchange: Bool) throws {
        let base = try fastTemporaryDirectory()
        let (count, expected, trace) = try cleanRun(scenario, refusingExchange: refusingExchange, in: base.url)
        for k in 1...count {
            let folder = base.appending("run-\(k)")
            let (url, tree) = try scenario.prepare(in: folder)
            let faults = FaultInjector(refusingExchange: refusingExchange)
            faults.fail(call: k, with: .interrupted)
            do {
                try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
            } catch {
                Issue.record("EINTR at call \(k) \(trace[k - 1]) made the save fail: \(error)")
            }
            #expect(faults.trace.contains { $0.injected == .interrupted }, "call \(k)")
            #expect(snapshot(url) == expected, "EINTR at call \(k) \(trace[k - 1])")
            #expect(litter(in: folder).isEmpty, "EINTR at call \(k) \(trace[k - 1])")
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test("a failure of every call of one kind leaves the original whole", arguments: [false, true])
    func everyCallOfAKind(refusingExchange: Bool) throws {
        let base = try fastTemporaryDirectory()
        for call in SystemCall.allCases {
            let folder = base.appending("kind-\(call)")
            let (url, tree) = try FaultScenario.replacePackage.prepare(in: folder)
            let original = snapshot(url)
            let faults = FaultInjector(refusingExchange: refusingExchange)
            faults.fail(call, with: .ioError)
            do {
                try tree.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
                // Only steps whose failure is harmless may fail without failing the save.
                #expect([.lock, .close, .unlink, .removeDirectory, .startWriteback].contains(call) || !faults.trace.contains { $0.injected != nil },
                        "\(call) failed but the save returned: \(faults.trace)")
                #expect(try FileWrapper(contentsOf: url).fileWrapper(atPath: "attachments/c.txt") != nil)
            } catch {
                #expect(error.description.contains(url.path), "\(call): \(error)")
                if error.originalIsIntact != false {
                    #expect(snapshot(url) == original, "\(call): \(error)")
                } else {
                    // Undoing the swap failed too: the item must at least be there, old or new.
                    Issue.record("\(call) failing everywhere left the original in doubt: \(error)")
                }
            }
        }
    }
}
