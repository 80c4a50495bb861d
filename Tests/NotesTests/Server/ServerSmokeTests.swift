import DocumentKitTesting
import Foundation
import Testing

@Suite("notes serve: starting and stopping")
struct ServerLifecycleTests {
    @Test func serverListensOnLoopbackAndExitsZeroOnSIGTERM() async throws {
        let folder = try TemporaryDirectory()
        let library = folder.url.appendingPathComponent("lib")
        try NotesRunner(library: library).ok(["init"])
        let server = try await NotesServerProcess.start(library: library)
        let reply = try await server.get("/api/notes")
        #expect(reply.status == 200)
        #expect(reply.json as? [Any] != nil)
        #expect(try await server.terminate() == 0)
    }
}
