#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitSystem
import Foundation
import Logging
import SystemPackage

/// The coordinator's side of ``PresenceServer``: asks the presenters of a unit in other
/// processes, over connections the coordination holds until it ends.
struct PresenceClient: Sendable {
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
    /// accessor is done), or throws naming the process that refused.
    ///
    /// A process that does not answer within `timeout` of being asked (stopped, hung, or too slow)
    /// is marked unresponsive (``UnresponsiveMark``) and the coordination goes on without it; a
    /// marked process is skipped at once, by this coordination and every other, until it
    /// answers again. Each process gets the whole `timeout`: one that missed it does not shorten
    /// the wait for the next.
    func ask(_ request: PresenterRequest, timeout: Duration, into connections: inout [PresenceConnection])
        throws(DocumentKitError)
    {
        let unitFolder = PresenceServer.unitFolder(folder, request.unit)
        guard let entries = entries.names(in: unitFolder) else { return }  // nobody presents it: the common case, one syscall
        for entry in entries where entry != ownName {
            let peer = PresenceServer.Peer(name: entry)
            // Version 1 servers do not know subitem deletions; their watchers tell them afterwards.
            guard peer.isVersion2 || request.kind != .subitemDeletion else { continue }
            let mark = UnresponsiveMark(folder: folder, name: entry)
            if mark.isSet {
                // Stuck: skipped without waiting. If its process is gone, its files go too.
                removeIfDead(peer, mark: mark, unitFolder: unitFolder)
                continue
            }
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
            let deadline = ContinuousClock.now + timeout
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
                // Marked before the connection closes: a process that wakes and finds its
                // coordinator gone finds the mark too, and removes it (see PresenceConversation).
                mark.set()
                close(connection.descriptor)  // its answer would come too late to read
                logger.warning(
                    "The presenter in process \(peer.pid) did not answer within the deadline for \(request.path); it is skipped until it answers again.")
            case .refused(let text):
                connections.append(connection)  // still usable; ended with the others
                throw DocumentKitError(
                    .busy, operation: .open, path: request.path, detail: "The presenter in process \(peer.pid) refused: \(text)")
            }
        }
    }

    /// Whether another process presents `unit` (one `stat` when nobody does).
    func othersPresent(_ unit: Int64) -> Bool {
        entries.names(in: PresenceServer.unitFolder(folder, unit))?.contains { $0 != ownName } ?? false
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

    /// Removes the entry, socket and mark of a marked process that is gone (`kill(pid, 0)` says
    /// so, and its socket refuses connections: the pid may belong to another pid namespace).
    private func removeIfDead(_ peer: PresenceServer.Peer, mark: UnresponsiveMark, unitFolder: String) {
        guard let pid = pid_t(peer.pid), kill(pid, 0) != 0, errno == ESRCH else { return }
        let socketPath = folder + "/" + peer.name + ".sock"
        let descriptor = dk_unix_connect(socketPath)
        if descriptor >= 0 {
            close(descriptor)
            return
        }
        guard errno == ECONNREFUSED || errno == ENOENT else { return }
        unlink(unitFolder + "/" + peer.name)
        unlink(socketPath)
        mark.clear()
        pool.forget(peer.name)
    }
}

private let logger = Logger(label: "DocumentKit.presenters")
