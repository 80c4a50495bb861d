#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Open version 2 connections to other processes' presence servers, idle between
/// coordinations: a connection serves one coordination at a time, then comes back here.
final class PresenceConnectionPool: Sendable {
    /// Idle connections kept per process; more are closed when given back.
    static let idleLimit = 4

    /// Idle connections by server name.
    private let idle = Mutex<[String: [PresenceConnection]]>([:])

    /// An idle connection to the server named `peer`, if any.
    func take(_ peer: String) -> PresenceConnection? {
        idle.withLock { $0[peer]?.popLast() }
    }

    /// Gives back a connection whose coordination is over.
    func giveBack(_ connection: PresenceConnection) {
        let kept = idle.withLock { idle -> Bool in
            guard idle[connection.peer, default: []].count < Self.idleLimit else { return false }
            idle[connection.peer, default: []].append(connection)
            return true
        }
        if !kept { close(connection.descriptor) }
    }

    /// Closes every idle connection to `peer` (its process is gone).
    func forget(_ peer: String) {
        for connection in idle.withLock({ $0.removeValue(forKey: peer) ?? [] }) { close(connection.descriptor) }
    }

    /// Closes every idle connection.
    func closeAll() {
        for connection in idle.withLock({ idle -> [PresenceConnection] in
            defer { idle = [:] }
            return Array(idle.values.joined())
        }) {
            close(connection.descriptor)
        }
    }

    deinit {
        idle.withLock { idle in
            for connection in idle.values.joined() { close(connection.descriptor) }
        }
    }
}
