#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import Dispatch
import DocumentKitSystem
import Foundation
import Synchronization

/// How the processes that present items find each other and are asked to step aside.
///
/// Each process with presenters in a namespace listens on one Unix socket,
/// `presenters/<pid>.<random>.v2.sock`, and publishes, for every unit it presents, an empty entry
/// `presenters/<unit>/<pid>.<random>.v2`. A coordinator lists the entry folder of its unit (nothing
/// to list: nobody to ask, one failed `open`), and asks each process there over a connection it
/// keeps from one coordination to the next (``PresenceConnectionPool``); the server serves a
/// connection's requests in turn on a thread of its own (``PresenceConversation``), running
/// presenter callbacks on that thread when the presenter's delivery is idle. Version 1 processes
/// (entries without `.v2`) get a connection per request, closed at the end. A socket that refuses
/// connections belongs to a dead process: its entries are removed by whoever finds them. A
/// process that misses a coordinator's deadline is marked unresponsive and skipped until it runs
/// again (``UnresponsiveMark``).
/// `Formats/presence/v2/SPEC.md` has the details.
final class PresenceServer: Sendable {
    let folder: String
    /// `<pid>.<random>.v2`: this process's name in the namespace.
    let name: String
    private let listener: CInt
    private let registry: PresenterRegistry
    /// The modes of what it makes in `folder`.
    private let modes: NamespaceModes
    /// Set by ``stop(units:)``.
    private let stopping = Mutex(false)

    /// A server's name in the namespace, as a coordinator reads it from an entry.
    struct Peer {
        let name: String

        /// Whether it speaks version 2 (its name ends in `.v2`).
        var isVersion2: Bool { name.hasSuffix(".v2") }
        /// Its process id, for messages.
        var pid: Substring { name.prefix { $0 != "." } }
    }

    /// A server for the presenters of `registry`, listening in `folder` (the namespace's
    /// `presenters/`), making what it makes there with `modes`.
    init?(folder: String, registry: PresenterRegistry, modes: NamespaceModes) {
        self.folder = folder
        name = "\(getpid()).\(TemporaryName.randomSuffix()).v2"
        self.registry = registry
        self.modes = modes
        modes.makeFolder(folder)
        let socketPath = folder + "/" + name + ".sock"
        listener = dk_unix_listen(socketPath)
        guard listener >= 0 else { return nil }
        // Connecting needs write permission on the socket: the group's, in a shared namespace.
        modes.setFileMode(socketPath)
        startThread(named: "dk.presence") { [self] in self.acceptLoop() }
    }

    static func unitFolder(_ folder: String, _ unit: Int64) -> String { folder + "/" + String(UInt64(bitPattern: unit), radix: 16) }

    /// Publishes this process as a presenter of `unit` (its first presenter there).
    func publish(_ unit: Int64) {
        let unitFolder = Self.unitFolder(folder, unit)
        modes.makeFolder(unitFolder)
        let fd = open(unitFolder + "/" + name, O_WRONLY | O_CREAT | O_CLOEXEC, modes.file)
        if fd >= 0 {
            fchmod(fd, modes.file)
            close(fd)
        }
    }

    /// Withdraws this process as a presenter of `unit` (its last presenter there is gone).
    func unpublish(_ unit: Int64) {
        let unitFolder = Self.unitFolder(folder, unit)
        unlink(unitFolder + "/" + name)
        rmdir(unitFolder)  // fails while others present it: fine
    }

    /// Stops serving: the socket and this process's entries for `units` are removed, and the
    /// accept thread ends (closing the listening socket). Connections being served end when their
    /// coordinators close them.
    func stop(units: [Int64]) {
        stopping.withLock { $0 = true }
        for unit in units { unpublish(unit) }
        unlink(folder + "/" + name + ".sock")
        shutdown(listener, Int32(SHUT_RDWR))  // wakes accept(2)
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            if connection >= 0 { _ = fcntl(connection, F_SETFD, FD_CLOEXEC) }
            if stopping.withLock({ $0 }) {
                if connection >= 0 { close(connection) }
                return
            }
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let mark = UnresponsiveMark(folder: folder, name: name)
            startThread(named: "dk.conversation") { [registry] in
                PresenceConversation(connection: connection, registry: registry, mark: mark).serve()
            }
        }
    }
}
