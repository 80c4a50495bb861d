#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitSystem
import Foundation
import SystemPackage

/// The coordinator's side of ``PresenceServer``: asks the presenters of a unit in other
/// processes, and holds their connections open until the coordination ends.
struct PresenceClient {
    let folder: String
    /// This process's own name (its own presenters are asked directly), if it has presenters.
    let ownName: String?

    /// Asks every other process presenting `request.unit`; returns the open connections (close
    /// them when the accessor is done), or throws naming the process that failed or was too slow.
    func ask(_ request: PresenterRequest, deadline: ContinuousClock.Instant) throws(DocumentKitError) -> [CInt] {
        let unitFolder = PresenceServer.unitFolder(folder, request.unit)
        guard access(unitFolder, F_OK) == 0 else { return [] }  // nobody presents it: the common case, one syscall
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: unitFolder), !entries.isEmpty else { return [] }
        var connections: [CInt] = []
        for entry in entries.sorted() where entry != ownName {
            let socketPath = folder + "/" + entry + ".sock"
            let connection = dk_unix_connect(socketPath)
            guard connection >= 0 else {
                if errno == ECONNREFUSED || errno == ENOENT {
                    // A dead process: forget its entry and socket.
                    unlink(unitFolder + "/" + entry)
                    unlink(socketPath)
                    continue
                }
                connections.forEach { close($0) }
                throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: request.path, step: "reaching the presenter of process \(pid(entry))")
            }
            connections.append(connection)
            let sent = request.encoded.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let remaining = max(0, Int((deadline - .now) / .milliseconds(1)))
            var reply = [UInt8](repeating: 0, count: 4_096)
            let ready = sent >= 0 ? dk_wait_readable(connection, Int32(remaining)) : -1
            let count = ready == 1 ? recv(connection, &reply, reply.count, 0) : -1
            let text = count > 0 ? String(decoding: reply[..<count], as: UTF8.self) : ""
            if text == "OK" { continue }
            if count == 0 {
                // The process ended while we asked: nothing to wait for.
                close(connections.removeLast())
                continue
            }
            connections.forEach { close($0) }
            if ready == 0 {
                throw DocumentKitError(
                    .busy, operation: .open, path: request.path,
                    detail: "The presenter in process \(pid(entry)) did not answer within the deadline.")
            }
            throw DocumentKitError(
                .busy, operation: .open, path: request.path,
                detail: "The presenter in process \(pid(entry)) refused: \(text.hasPrefix("ERR ") ? String(text.dropFirst(4)) : text)")
        }
        return connections
    }

    private func pid(_ entry: String) -> String { String(entry.prefix { $0 != "." }) }
}
