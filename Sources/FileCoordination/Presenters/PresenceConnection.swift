#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims

/// A connection one coordination holds to another process's presence server.
struct PresenceConnection: Sendable {
    let descriptor: CInt
    /// The server's name in the namespace.
    let peer: String
    /// Whether the server speaks version 2 (the connection outlives the coordination).
    let isVersion2: Bool
    /// Whether the server holds reacquirers until the end packet.
    var holds = false

    /// How the server answered a request.
    enum Answer: Equatable {
        case ok
        /// Closed (or the request could not be sent): its process ended.
        case closed
        case timedOut
        /// `ERR`, with the server's message.
        case refused(String)
    }

    /// Sends `request` and waits for the answer until `deadline`.
    mutating func exchange(_ request: PresenterRequest, deadline: ContinuousClock.Instant) -> Answer {
        let packet = isVersion2 ? request.encodedVersion2 : Array(request.encoded)
        guard PresencePacket.send(packet, on: descriptor) else { return .closed }
        let remaining = max(0, Int((deadline - .now) / .milliseconds(1)))
        let ready = dk_wait_readable(descriptor, Int32(clamping: remaining))
        guard ready == 1 else { return ready == 0 ? .timedOut : .closed }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4_096) { reply in
            let count = recv(descriptor, reply.baseAddress, reply.count, 0)
            guard count > 0 else { return .closed }
            let bytes = UnsafeBufferPointer(rebasing: reply[..<count])
            if bytes.elementsEqual(PresencePacket.ok) { return .ok }
            if isVersion2 && bytes.elementsEqual(PresencePacket.okHold) {
                holds = true
                return .ok
            }
            let text = String(decoding: bytes, as: UTF8.self)
            return .refused(text.hasPrefix("ERR ") ? String(text.dropFirst(4)) : text)
        }
    }

    /// Ends the coordination on this connection: a version 2 server that holds reacquirers gets
    /// the end packet, and the connection goes back to `pool`; a version 1 server's is closed
    /// (which, to it, is the end).
    func end(into pool: PresenceConnectionPool) {
        guard isVersion2, !holds || PresencePacket.send(PresencePacket.end, on: descriptor) else {
            close(descriptor)
            return
        }
        pool.giveBack(descriptor, to: peer)
    }
}
