@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A running `dk-index-child`, its output read from a file.
final class IndexChild {
    let process = Process()
    let output: URL

    /// The built `dk-index-child`, beside the test runner.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("dk-index-child")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        fatalError("dk-index-child not found; build with `swift build --build-tests`")
    }()

    init(_ library: IndexTestLibrary, prefix: String, count: String) throws {
        output = library.cache.url.deletingLastPathComponent().appendingPathComponent("index-child-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.executableURL = Self.executable
        process.arguments = [library.url.path, library.cache.url.path, prefix, count]
        process.standardOutput = try FileHandle(forWritingTo: output)
        _ = FileManager.default.createFile(atPath: output.path + ".err", contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output.path + ".err"))
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: output)
        try? FileManager.default.removeItem(atPath: output.path + ".err")
    }

    /// What the child wrote on standard error.
    var errors: String { (try? String(contentsOfFile: output.path + ".err", encoding: .utf8)) ?? "" }

    /// How many notes the child reported written so far.
    var written: Int { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").count }

    /// Waits (up to 10 s) for the child to exit; its status.
    func wait() async -> Int32? {
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

@Suite("Index across processes")
struct IndexProcessTests {
    @Test("two processes updating the persisted index at once lose nothing")
    func twoProcesses() async throws {
        let library = try IndexTestLibrary()
        try await DocumentIndex(library.configuration()).refresh()
        let one = try IndexChild(library, prefix: "One", count: "25")
        let two = try IndexChild(library, prefix: "Two", count: "25")
        #expect(await one.wait() == 0)
        #expect(await two.wait() == 0)
        let injector = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: injector.fileSystem))
        for n in 0..<25 {
            #expect(await index.entries(forKey: "One \(n)").map(\.relativePath) == ["One\(n).note"])
            #expect(await index.entries(forKey: "Two \(n)").map(\.relativePath) == ["Two\(n).note"])
        }
        // Answered from the persisted index: no manifest was read.
        #expect(injector.trace.filter { $0.call == .open && $0.name == "Info.json" }.isEmpty)
        #expect(await index.notices.isEmpty)
    }

    @Test("a process killed while it updates the index leaves an index that is usable and right")
    func killedMidUpdate() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<20 { try library.writeNote("Old\(n).note", title: "Old \(n)") }
        try await DocumentIndex(library.configuration()).refresh()
        let child = try IndexChild(library, prefix: "Loop", count: "loop")
        let deadline = ContinuousClock.now + .seconds(10)
        while child.written < 15, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(child.written >= 15)
        kill(child.process.processIdentifier, SIGKILL)
        _ = await child.wait()

        let index = try DocumentIndex(library.configuration())
        try await index.refresh()
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        #expect(await index.entries == fresh.entries)
        // Not rebuilt: SQLite's transaction left it whole.
        #expect(await index.notices.isEmpty)
    }
}
