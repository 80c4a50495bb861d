#if canImport(Glibc)
import Glibc
#endif

/// The fixed packets of the presence conversation, and sending one (see `Formats/presence/v2`).
enum PresencePacket {
    /// The presenters stepped aside; nothing waits for the end of the coordination.
    static let ok = Array("OK".utf8)
    /// The presenters stepped aside; reacquirers wait for ``end`` (version 2).
    static let okHold = Array("OK HOLD".utf8)
    /// The coordination is over: run the reacquirers (version 2).
    static let end = Array("E".utf8)

    /// `ERR <message>`: the presenters refused.
    static func error(_ message: String) -> [UInt8] { Array("ERR \(message)".utf8) }

    /// Sends `packet` on `connection`; whether it went (a closed peer is no signal).
    @discardableResult
    static func send(_ packet: [UInt8], on connection: CInt) -> Bool {
        packet.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == packet.count
    }
}
