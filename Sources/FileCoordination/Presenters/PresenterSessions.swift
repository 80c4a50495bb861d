#if canImport(Glibc)
import Glibc
#endif
import DocumentKitSystem
import Foundation

/// The presenters a coordination asked to step aside, to be given their items back when its
/// accessor is done.
struct PresenterSessions: Sendable {
    var connections: [PresenceConnection] = []
    /// Where version 2 connections go back when the coordination ends.
    var pool: PresenceConnectionPool?
    var reacquirers: [@Sendable () async -> Void] = []

    /// The requests for the resolved items: one per unit, the strongest kind wanted; and for a
    /// deletion, one to every folder above the item's unit (their presenters hear of a subitem's
    /// deletion; the presenters of an enclosing package, the unit itself, hear it through the
    /// unit's request).
    static func requests(for resolved: [FileCoordinator.Resolved]) -> [PresenterRequest] {
        if resolved.count == 1 {
            // The common case: one item, and unless it is deleted, one request.
            let request = request(for: resolved[0])
            if request.kind != .deletion { return [request] }
        }
        var byUnit: [Int64: PresenterRequest] = [:]
        var subitemDeletions: [PresenterRequest] = []
        for entry in resolved {
            let unit = entry.item.unitOffset
            var request = request(for: entry)
            if request.kind == .deletion {
                for folder in entry.item.components[..<entry.item.lockUnitIndex] {
                    let folderRequest = PresenterRequest(
                        kind: .subitemDeletion, save: false, unit: LockPlan.itemOffset(folder.key), itemUnit: unit, path: entry.item.path)
                    if !subitemDeletions.contains(folderRequest) { subitemDeletions.append(folderRequest) }
                }
            }
            if let existing = byUnit[unit] {
                if existing.kind.rank > request.kind.rank { request.kind = existing.kind }
                request.save = request.save || existing.save
            }
            byUnit[unit] = request
        }
        return byUnit.keys.sorted().map { byUnit[$0]! } + subitemDeletions
    }

    /// What one item's coordination asks of the presenters of its unit.
    private static func request(for entry: FileCoordinator.Resolved) -> PresenterRequest {
        let unit = entry.item.unitOffset
        switch entry.intent.access {
        case .reading(let options):
            return PresenterRequest(kind: .reader, save: !options.contains(.withoutChanges), unit: unit, path: entry.item.path)
        case .writing(let options):
            return PresenterRequest(
                kind: options.contains(.forDeleting) ? .deletion : .writer, save: options.contains(.forMerging), unit: unit,
                path: entry.item.path)
        }
    }

    /// Gives the items back: ends the coordination on every connection (their processes run
    /// their reacquirers), then runs this process's reacquirers.
    func end() async {
        if let pool { for connection in connections { connection.end(into: pool) } }
        for reacquire in reacquirers { await reacquire() }
    }

    /// The same, from a thread that must not return before it is done.
    func endBlocking() {
        if let pool { for connection in connections { connection.end(into: pool) } }
        if !reacquirers.isEmpty {
            let reacquirers = reacquirers
            ThreadExecutor().run { for reacquire in reacquirers { await reacquire() } }
        }
    }
}

extension FileCoordinator {
    /// Asks the presenters of `resolved` items, in other processes and this one (except the
    /// coordinator's own), to save and step aside. Nobody presenting costs one failed `open`.
    /// Other processes' answers are waited for on ``BlockingCalls``' threads, never on the caller's.
    ///
    /// `inline`: this process's presenters may run in the calling task (see
    /// ``PresenterMailbox/perform(inline:_:)``).
    func askPresenters(_ resolved: [Resolved], inline: Bool = false) async throws(DocumentKitError) -> PresenterSessions {
        let client = namespace.presenceClient
        var sessions = PresenterSessions(pool: client.pool)
        let localUnits = namespace.presenters.count > 0 ? namespace.presenters.presentedUnits : [:]
        for request in PresenterSessions.requests(for: resolved) {
            do throws(DocumentKitError) {
                if client.othersPresent(request.unit) {
                    // Their answers are waited for on a thread of BlockingCalls, not of the cooperative pool.
                    let (connections, timeout) = (sessions.connections, presenterTimeout)
                    let outcome = await BlockingCalls.shared.run { () -> ([PresenceConnection], DocumentKitError?) in
                        var connections = connections
                        do throws(DocumentKitError) { try client.ask(request, timeout: timeout, into: &connections) } catch {
                            return (connections, error)
                        }
                        return (connections, nil)
                    }
                    sessions.connections = outcome.0
                    if let error = outcome.1 { throw error }
                }
            } catch {
                await sessions.end()
                throw error
            }
            guard localUnits[request.unit] != nil else { continue }
            switch await namespace.presenters.prepare(request, excluding: presenter?.currentID, inline: inline) {
            case .success(let reacquirers): sessions.reacquirers += reacquirers
            case .failure(let error):
                await sessions.end()
                throw error
            }
        }
        return sessions
    }

    /// The blocking form of ``askPresenters(_:inline:)``.
    func askPresentersBlocking(_ resolved: [Resolved]) throws(DocumentKitError) -> PresenterSessions {
        let localUnits = namespace.presenters.count > 0 ? namespace.presenters.presentedUnits : [:]
        let requests = PresenterSessions.requests(for: resolved)
        if requests.allSatisfy({ localUnits[$0.unit] == nil }) {
            // Only other processes to ask: no task needed.
            let client = namespace.presenceClient
            var sessions = PresenterSessions(pool: client.pool)
            for request in requests {
                do { try client.ask(request, timeout: presenterTimeout, into: &sessions.connections) } catch {
                    sessions.endBlocking()
                    throw error
                }
            }
            return sessions
        }
        let outcome: Result<PresenterSessions, DocumentKitError> = ThreadExecutor().run {
            do throws(DocumentKitError) { return .success(try await self.askPresenters(resolved, inline: true)) } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Refuses a coordination of an item from inside a presenter callback about that item: the
    /// coordinator that called the presenter holds the item and waits for the callback.
    func refuseCoordinationFromPresenterCallback(_ plan: LockPlan, _ resolved: [Resolved]) throws(DocumentKitError) {
        let units = PresenterCallbackContext.units
        guard !units.isEmpty else { return }
        for entry in resolved where units.contains(entry.item.unitOffset) {
            throw DocumentKitError(
                .busy, operation: .open, path: entry.item.path,
                detail: "A coordination was started from inside a presenter callback about the same item; the coordinator that sent the callback holds the item and waits for it (a deadlock). Do the work after the callback returns.")
        }
    }
}
