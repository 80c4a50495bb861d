import Dispatch
import DocumentKit
import DocumentKitTesting
@testable import FileVersions
import Foundation
import Synchronization
import Testing

/// Where a durable save by exchange waits for the disk: the version's record and the store folder
/// naming its entry are flushed with the new package, before the exchange; after it, the two
/// folders the exchange changed, and nothing else before the save returns.
@Suite("The flushes of a durable save by exchange", .timeLimit(.minutes(2)))
struct ExchangeFlushTests {
    /// Traces every call and stops the completion (where it makes `fresh`) until `open()`.
    final class TracingGate: Sendable {
        let trace = Mutex<[(call: SystemCall, name: String)]>([])
        let reached = DispatchSemaphore(value: 0)
        private let gate = DispatchSemaphore(value: 0)
        var fileSystem: FileSystem {
            FileSystem(interceptor: { [self] call, name in
                trace.withLock { $0.append((call, name)) }
                if call == .makeDirectory, name == "fresh" {
                    reached.signal()
                    gate.wait()
                }
                return nil
            })
        }
        func open() { gate.signal() }
    }

    @Test("a durable save by exchange flushes the record and the store folder with the new package before the exchange, and after it only the two folders the exchange changed")
    func recordAndFolderAreFlushedWithThePackage() throws {
        let library = try VersionLibrary()
        let item = try ExchangeKeepTests.makeNote(library, members: LaterCompletionTests.v1)
        let gate = TracingGate()
        let store = VersionStore(
            libraryURL: library.url, pruning: .keepAll, durability: .durable, fileSystem: gate.fileSystem, versionCompletion: .afterSaveReturns)
        let options = SaveOptions(durability: .durable, fileSystem: gate.fileSystem)
        _ = try store.save(ExchangeKeepTests.tree(["body.md": "v2", "attachments/a.txt": "A"]), to: item, options: options, keepingReplacedAs: .save)
        let trace = gate.trace.withLock { $0 }  // the completion waits at the gate: these are the save's calls
        #expect(gate.reached.wait(timeout: .now() + 30) == .success)
        defer { gate.open(); store.waitForPendingVersions() }

        let swap = try #require(trace.firstIndex { $0.call == .exchange }, "\(trace)")
        let flushes: Set<SystemCall> = [.synchronize, .synchronizeDirectory, .synchronizeFileSystem]
        let recordFlush = try #require(trace.firstIndex { $0.call == .synchronize && $0.name.hasSuffix("/record.json") }, "\(trace)")
        let recordNamed = try #require(trace.firstIndex { $0.call == .rename && $0.name.contains("record.json") }, "\(trace)")
        let folderFlushes = trace.indices.filter { trace[$0].call == .synchronizeDirectory && trace[$0].name.hasSuffix("/documents/id-TRIP") }
        #expect(recordFlush < recordNamed && recordNamed < swap, "\(trace)")
        let folderFlush = try #require(folderFlushes.first, "\(trace)")
        #expect(folderFlushes.count == 1 && folderFlush < swap, "the store folder is flushed once, before the exchange: \(trace)")
        // One batch (the flushes in a row that end with the store folder's): the package's root
        // (with the members held, unless a subfolder's flush took them), the record, the store folder.
        var start = folderFlush
        while start > 0, flushes.contains(trace[start - 1].call) { start -= 1 }
        let batch = trace[start...folderFlush]
        #expect(batch.contains { $0.call == .synchronizeDirectory && !$0.name.hasSuffix("/documents/id-TRIP") }, "the root: \(batch)")
        #expect(batch.contains { $0.call == .synchronize && $0.name.hasSuffix("/record.json") }, "the record: \(batch)")
        // After the exchange: the library folder and the entry, and no other flush before the return.
        let after = trace[(swap + 1)...].filter { flushes.contains($0.call) }
        #expect(after.count == 2 && after.allSatisfy { $0.call == .synchronizeDirectory }, "\(after)")
        #expect(after.contains { $0.name.contains("/.swap-") } && after.contains { !$0.name.contains("/documents/") }, "\(after)")
    }
}
