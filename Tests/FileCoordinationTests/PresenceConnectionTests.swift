#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@testable import FileCoordination

/// The sockets this process has open (`socket:[inode]` in `/proc/self/fd`).
private func openSockets() -> Set<String> {
    let folder = "/proc/self/fd"
    var sockets: Set<String> = []
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name), target.hasPrefix("socket:") {
            sockets.insert(target)
        }
    }
    return sockets
}

/// The unit key of the item at `url`, as presence entries name it.
private func unit(of url: URL, in namespace: CoordinationNamespace) throws -> Int64 {
    try ItemPath.resolve(url, resolvingFinalLink: false, namespace: namespace).unitOffset
}

@Suite("Presence connections: kept open between coordinations, ended by a packet or by closing, compatible with version 1")
struct PresenceConnectionTests {
    @Test("consecutive coordinations reuse one connection to the presenting process")
    func connectionIsReused() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        let before = openSockets()
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in }
        let first = openSockets().subtracting(before)
        #expect(first.count == 1, "\(first)")
        for _ in 0..<20 { try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in } }
        #expect(openSockets().subtracting(before) == first)
        let callbacks = await child.callbacks(count: 42)
        #expect(callbacks == Array(repeating: ["relinquish-reader", "reacquire"], count: 21).flatMap { $0 })
    }

    @Test("each coordination's end gives the item back before the next coordination asks again")
    func endPacketRunsReacquirersInOrder() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in }
        try fixture.coordinator.coordinate(writingItemAt: fixture.url("note.txt")) { _ in }
        #expect(await child.callbacks(count: 4) == ["relinquish-reader", "reacquire", "relinquish-writer", "reacquire"])
    }

    @Test("a coordinator killed by SIGKILL while it holds the item: the presenter gets the item back")
    func killedCoordinatorRunsReacquirers() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let presenter = try await fixture.present(fixture.url("note.txt").path)
        let coordinator = try fixture.hold("read", fixture.url("note.txt").path, milliseconds: 30_000)
        #expect(await coordinator.wait(for: "granted", timeout: .seconds(20)) != nil, "\(coordinator.errorOutput)")
        #expect(presenter.callbacks == ["save", "relinquish-reader"])
        coordinator.killNow()
        #expect(await presenter.wait(forLine: "reacquire"), "\(presenter.callbacks)")
    }

    @Test("a presenting process that died after a coordination: its kept connection is dropped, the next one goes on")
    func keptConnectionToDeadProcess() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in }
        child.killNow()
        let started = ContinuousClock.now
        try fixture.coordinator.coordinate(readingItemAt: fixture.url("note.txt"), options: .withoutChanges) { _ in }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(try fixture.presenceLeftovers(of: child).isEmpty)
    }

    @Test("a version 1 coordinator: one request answered OK, the item given back when it closes")
    func version1Coordinator() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let child = try await fixture.present(fixture.url("note.txt").path)
        let presenters = fixture.namespaceFolder.url.appendingPathComponent("presenters").path
        let unitFolder = PresenceServer.unitFolder(presenters, try unit(of: fixture.url("note.txt"), in: fixture.namespace))
        let entry = try #require(try FileManager.default.contentsOfDirectory(atPath: unitFolder).first)
        let connection = dk_unix_connect(presenters + "/" + entry + ".sock")
        try #require(connection >= 0)
        let request = PresenterRequest(
            kind: .writer, save: false, unit: try unit(of: fixture.url("note.txt"), in: fixture.namespace), path: fixture.url("note.txt").path)
        let packet = Array(request.encoded)
        #expect(send(connection, packet, packet.count, Int32(MSG_NOSIGNAL)) == packet.count)
        var reply = [UInt8](repeating: 0, count: 64)
        #expect(dk_wait_readable(connection, 5_000) == 1)
        let count = recv(connection, &reply, reply.count, 0)
        #expect(count > 0 && String(decoding: reply[..<count], as: UTF8.self) == "OK")
        try await Task.sleep(for: .milliseconds(200))
        #expect(child.callbacks == ["relinquish-writer"], "held until the connection closes")
        close(connection)
        #expect(await child.wait(forLine: "reacquire"), "\(child.callbacks)")
    }

    @Test("a version 1 presenting process: asked with a version 1 request, given the item back by closing")
    func version1PresentingProcess() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("note.txt")
        let server = try LegacyPresenceServer(
            namespace: fixture.namespaceFolder.url, unit: try unit(of: fixture.url("note.txt"), in: fixture.namespace))
        defer { server.stop() }
        let coordinator = try fixture.hold("write", fixture.url("note.txt").path, milliseconds: 200)
        #expect(await coordinator.exitStatus(timeout: .seconds(20)) == 0, "\(coordinator.errorOutput)")
        let released = try #require(coordinator.time("released"))
        let events = await server.events(count: 2)
        try #require(events.count == 2, "\(events)")
        #expect(events[0].text.hasPrefix("R writer 0 "), "\(events)")
        #expect(events[0].text.hasSuffix(" " + fixture.url("note.txt").path), "\(events)")
        #expect(events[1].text == "closed")
        #expect(events[1].time >= released, "the connection closed when the coordination ended")
    }
}

/// A presenting process as version 1 of DocumentKit was, for one unit: its entry has no `.v2`;
/// it answers each connection's one request `OK` and notes when the connection closes.
private final class LegacyPresenceServer: Sendable {
    struct Event: Sendable {
        let text: String
        let time: UInt64
    }

    private let listener: CInt
    private let log = Mutex<[Event]>([])

    init(namespace: URL, unit: Int64) throws {
        let presenters = namespace.appendingPathComponent("presenters").path
        let name = "\(getpid()).legacyv1abcd"
        mkdir(presenters, 0o700)
        let unitFolder = PresenceServer.unitFolder(presenters, unit)
        mkdir(unitFolder, 0o700)
        try Data().write(to: URL(fileURLWithPath: unitFolder + "/" + name))
        listener = dk_unix_listen(presenters + "/" + name + ".sock")
        guard listener >= 0 else { throw CocoaError(.fileWriteUnknown) }
        Thread { [self] in serve() }.start()
    }

    deinit { close(listener) }

    /// Stops accepting (the serving thread ends).
    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let count = recv(connection, &buffer, buffer.count, 0)
            if count > 0 {
                let request = String(decoding: buffer[..<count], as: UTF8.self)
                log.withLock { $0.append(Event(text: request, time: monotonicNanoseconds())) }
                _ = send(connection, "OK", 2, Int32(MSG_NOSIGNAL))
                while recv(connection, &buffer, buffer.count, 0) > 0 {}
            }
            log.withLock { $0.append(Event(text: "closed", time: monotonicNanoseconds())) }
            close(connection)
        }
    }

    /// The first `count` events, waiting up to 5 s for them.
    func events(count: Int) async -> [Event] {
        let deadline = ContinuousClock.now + .seconds(5)
        while log.withLock({ $0.count }) < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return log.withLock { $0 }
    }
}
