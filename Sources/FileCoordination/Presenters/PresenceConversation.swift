#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One connection to this process's presence server, served on a thread of its own.
///
/// Version 1: one request, its answer, then the close that ends the coordination. Version 2:
/// requests in turn, for one coordination after another; a coordination's reacquirers run at
/// its end packet. Either way, a connection that closes (the coordinator ended or died, even by
/// `SIGKILL`) runs the reacquirers it still holds.
///
/// A request whose coordinator hung up before it was read (it gave up waiting: this process was
/// stopped or too slow) is not acted on: the coordinator went on without this process's
/// presenters, and a save run now would write without its lock. Such a request, an answer that
/// could not be sent, or a connection closed while this process is marked unresponsive, tells
/// the process it missed requests: it removes its ``UnresponsiveMark`` and every presenter hears
/// that its item changed (``PresenterRegistry/announceMissedRequests()``).
///
/// The whole conversation is one task on the connection's thread (``ThreadExecutor``), so a
/// request costs no task and no thread switch: presenter callbacks run right here when the
/// presenter's delivery is idle.
struct PresenceConversation: Sendable {
    /// The accepted connection (closed when the conversation ends).
    let connection: CInt
    /// This process's presenters.
    let registry: PresenterRegistry
    /// This process's mark, set by a coordinator that stopped waiting for it.
    let mark: UnresponsiveMark

    /// Serves the connection until it closes.
    func serve() {
        let executor = ThreadExecutor()
        executor.run { await self.converse(executor) }
        close(connection)
    }

    /// Reads and answers packets until the connection closes, then runs what is still held.
    private func converse(_ executor: ThreadExecutor) async {
        var held: [@Sendable () async -> Void] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = executor.blocking { recv(connection, &buffer, buffer.count, 0) }
            guard count > 0 else { break }
            if buffer[0] == UInt8(ascii: "E") && count == 1 {
                for reacquire in held { await reacquire() }
                held = []
                continue
            }
            if Self.peerHasHungUp(connection) {
                // Read too late: its coordinator gave up on this process and went on.
                missedRequests()
                break
            }
            if buffer[0] == UInt8(ascii: "R") {
                // A version 1 coordinator: one request, then it closes the connection to end.
                guard let request = PresenterRequest(Data(buffer[..<count])) else { break }
                held = await answer(request, holdReply: PresencePacket.ok)
                executor.blocking { while recv(connection, &buffer, buffer.count, 0) > 0 {} }
                break
            }
            let request = buffer.withUnsafeBytes { PresenterRequest(version2: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            guard let request else {
                PresencePacket.send(PresencePacket.error("unknown packet"), on: connection)
                continue
            }
            held += await answer(request, holdReply: PresencePacket.okHold)
        }
        for reacquire in held { await reacquire() }  // closed: the coordinator ended, or died
        // A coordinator that gives up marks this process before it closes the connection.
        if mark.clear() { registry.announceMissedRequests() }
    }

    /// This process missed requests: it is no longer marked, and its presenters look again.
    private func missedRequests() {
        mark.clear()
        registry.announceMissedRequests()
    }

    /// Whether the coordinator closed its end (a request read now was given up on).
    private static func peerHasHungUp(_ connection: CInt) -> Bool {
        var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLHUP) != 0
    }

    /// Asks this process's presenters, sends the answer (`holdReply` if there are reacquirers)
    /// and returns the reacquirers.
    private func answer(_ request: PresenterRequest, holdReply: [UInt8]) async -> [@Sendable () async -> Void] {
        switch await registry.prepare(request, excluding: nil, inline: true) {
        case .failure(let error):
            if !PresencePacket.send(PresencePacket.error("\(error)"), on: connection) { missedRequests() }
            return []
        case .success(let reacquirers):
            // Not sent: the coordinator stopped waiting (or died) while the presenters worked.
            if !PresencePacket.send(reacquirers.isEmpty ? PresencePacket.ok : holdReply, on: connection) { missedRequests() }
            return reacquirers
        }
    }
}
