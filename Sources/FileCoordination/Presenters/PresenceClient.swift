#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitSystem
import Foundation
import SystemPackage

/// The coordinator's side of ``PresenceServer``: asks the presenters of a unit in other
/// processes, over connections the coordination holds until it ends.
struct PresenceClient {
    /// `presenters/` in the namespace folder.
    let folder: String
    /// This process's own name (its own presenters are asked directly), if it has presenters.
    let ownName: String?
    /// Idle connections to version 2 servers.
    let pool: PresenceConnectionPool
    /// Listings of unit folders.
    let entries: PresenceEntryCache

    /// Asks every other process presenting `request.unit`, adding the connections used to
    /// `connections` (one per version 2 process for the whole coordination; end them when the
    /// accessor is done), or throws naming the process that failed or was too slow.
    func ask(_ request: PresenterRequest, deadline: ContinuousClock.Instant, into connections: inout [PresenceConnection])
        throws(DocumentKitError)
    {
        let unitFolder = PresenceServer.unitFolder(folder, request.unit)
        guard let entries = entries.names(in: unitFolder) else { return }  // nobody presents it: the common case, one syscall
        for entry in entries where entry != ownName {
            let peer = PresenceServer.Peer(name: entry)
            // Version 1 servers do not know subitem deletions; their watchers tell them afterwards.
            guard peer.isVersion2 || request.kind != .subitemDeletion else { continue }
            var connection: PresenceConnection
            var pooled = false
            if let index = connections.firstIndex(where: { $0.peer == entry && $0.isVersion2 }) {
                // Already asked in this coordination: the same connection carries this request too.
                connection = connections.remove(at: index)
            } else if peer.isVersion2, let idle = pool.take(entry) {
                connection = idle
                pooled = true
            } else {
                guard let fresh = try connect(peer, unitFolder: unitFolder, request: request) else { continue }
                connection = fresh
            }
            var answer = connection.exchange(request, deadline: deadline)
            if answer == .closed && pooled {
                // The pooled connection had gone stale: one fresh try.
                close(connection.descriptor)
                guard let fresh = try connect(peer, unitFolder: unitFolder, request: request) else { continue }
                connection = fresh
                answer = connection.exchange(request, deadline: deadline)
            }
            switch answer {
            case .ok:
                connections.append(connection)
            case .closed:
                close(connection.descriptor)  // the process ended while we asked: nothing to wait for
            case .timedOut:
                close(connection.descriptor)  // its answer would come too late to read
                throw failure(answer, peer, request)
            case .refused:
                connections.append(connection)  // still usable; ended with the others
                throw failure(answer, peer, request)
            }
        }
    }

    /// A new connection to `peer`, or nil if its process is dead (its entry and socket are then removed).
    private func connect(_ peer: PresenceServer.Peer, unitFolder: String, request: PresenterRequest) throws(DocumentKitError)
        -> PresenceConnection?
    {
        let socketPath = folder + "/" + peer.name + ".sock"
        let descriptor = dk_unix_connect(socketPath)
        guard descriptor >= 0 else {
            if errno == ECONNREFUSED || errno == ENOENT {
                unlink(unitFolder + "/" + peer.name)
                unlink(socketPath)
                pool.forget(peer.name)
                return nil
            }
            throw DocumentKitError(
                Errno(rawValue: errno), operation: .open, path: request.path, step: "reaching the presenter of process \(peer.pid)")
        }
        return PresenceConnection(descriptor: descriptor, peer: peer.name, isVersion2: peer.isVersion2)
    }

    /// The `busy` error for a process that refused or did not answer in time.
    private func failure(_ answer: PresenceConnection.Answer, _ peer: PresenceServer.Peer, _ request: PresenterRequest) -> DocumentKitError {
        if case .refused(let text) = answer {
            return DocumentKitError(
                .busy, operation: .open, path: request.path, detail: "The presenter in process \(peer.pid) refused: \(text)")
        }
        return DocumentKitError(
            .busy, operation: .open, path: request.path, detail: "The presenter in process \(peer.pid) did not answer within the deadline.")
    }
}
