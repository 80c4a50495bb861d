#if canImport(Glibc)
import Glibc
#endif

/// A connection one coordination holds to another process's presence server.
struct PresenceConnection: Sendable {
    /// The connected socket.
    let descriptor: CInt
    /// The server's name in the namespace.
    let peer: String
    /// Whether the server speaks version 2 (the connection outlives the coordination).
    let isVersion2: Bool
    /// Whether the server holds reacquirers until the end packet.
    var holds = false
    /// The receive timeout set on the socket (`SO_RCVTIMEO`), in milliseconds; 0: none yet.
    var receiveTimeout: Int32 = 0

    /// How the server answered a request.
    enum Answer: Equatable {
        /// `OK` or `OK HOLD`.
        case ok
        /// Closed (or the request could not be sent): its process ended.
        case closed
        /// No answer before the deadline.
        case timedOut
        /// `ERR`, with the server's message.
        case refused(String)
    }

    /// Sends `request` and waits for the answer until `deadline`.
    mutating func exchange(_ request: PresenterRequest, deadline: ContinuousClock.Instant) -> Answer {
        let packet = isVersion2 ? request.encodedVersion2 : Array(request.encoded)
        guard PresencePacket.send(packet, on: descriptor) else { return .closed }
        let remaining = Int32(min(max(0, (deadline - .now) / .milliseconds(1)), Double(Int32.max)))
        let flags = remaining > 0 && setReceiveTimeout(near: remaining) ? 0 : Int32(MSG_DONTWAIT)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4_096) { reply in
            var count = recv(descriptor, reply.baseAddress, reply.count, flags)
            while count < 0 && errno == EINTR { count = recv(descriptor, reply.baseAddress, reply.count, flags) }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timedOut }
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

    /// Makes a blocking receive give up after about `milliseconds` (within 1%, at least 5 ms: the
    /// timeout stays set from one exchange to the next, so it is set again only when the deadline
    /// differs). Whether it is set.
    private mutating func setReceiveTimeout(near milliseconds: Int32) -> Bool {
        guard receiveTimeout == 0 || abs(receiveTimeout - milliseconds) > max(5, milliseconds / 100) else { return true }
        var time = timeval(tv_sec: Int(milliseconds / 1_000), tv_usec: Int(milliseconds % 1_000) * 1_000)
        guard setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size)) == 0 else { return false }
        receiveTimeout = milliseconds
        return true
    }

    /// Ends the coordination on this connection: a version 2 server that holds reacquirers gets
    /// the end packet, and the connection goes back to `pool`; a version 1 server's is closed
    /// (which, to it, is the end).
    func end(into pool: PresenceConnectionPool) {
        guard isVersion2, !holds || PresencePacket.send(PresencePacket.end, on: descriptor) else {
            close(descriptor)
            return
        }
        var idle = self
        idle.holds = false
        pool.giveBack(idle)
    }
}
