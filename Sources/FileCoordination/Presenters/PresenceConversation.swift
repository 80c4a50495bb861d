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
/// The whole conversation is one task on the connection's thread (``ThreadExecutor``), so a
/// request costs no task and no thread switch: presenter callbacks run right here when the
/// presenter's delivery is idle.
struct PresenceConversation: Sendable {
    /// The accepted connection (closed when the conversation ends).
    let connection: CInt
    /// This process's presenters.
    let registry: PresenterRegistry

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
    }

    /// Asks this process's presenters, sends the answer (`holdReply` if there are reacquirers)
    /// and returns the reacquirers.
    private func answer(_ request: PresenterRequest, holdReply: [UInt8]) async -> [@Sendable () async -> Void] {
        switch await registry.prepare(request, excluding: nil, inline: true) {
        case .failure(let error):
            PresencePacket.send(PresencePacket.error("\(error)"), on: connection)
            return []
        case .success(let reacquirers):
            PresencePacket.send(reacquirers.isEmpty ? PresencePacket.ok : holdReply, on: connection)
            return reacquirers
        }
    }
}
