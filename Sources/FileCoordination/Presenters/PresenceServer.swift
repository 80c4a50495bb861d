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
/// `presenters/<pid>.<random>.sock`, and publishes, for every unit it presents, an empty entry
/// `presenters/<unit>/<pid>.<random>`. A coordinator lists the entry folder of its unit (nothing
/// to list: nobody to ask, one failed `open`), connects to each socket, sends a
/// ``PresenterRequest`` and waits for `OK` (or `ERR …`) until its deadline; it keeps the
/// connection open while its accessor runs and closes it when done, which runs the presenters'
/// reacquirers. A socket that refuses connections belongs to a dead process: its entries are
/// removed by whoever finds them.
final class PresenceServer: Sendable {
    let folder: String
    /// `<pid>.<random>`: this process's name in the namespace.
    let name: String
    private let listener: CInt
    private let registry: PresenterRegistry

    init?(namespaceDirectory: URL, registry: PresenterRegistry) {
        folder = namespaceDirectory.appendingPathComponent("presenters").path
        name = "\(getpid()).\(TemporaryName.randomSuffix())"
        self.registry = registry
        mkdir(folder, 0o700)
        listener = dk_unix_listen(folder + "/" + name + ".sock")
        guard listener >= 0 else { return nil }
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "DocumentKit.PresenceServer"
        thread.start()
    }

    static func unitFolder(_ folder: String, _ unit: Int64) -> String { folder + "/" + String(UInt64(bitPattern: unit), radix: 16) }

    /// Publishes this process as a presenter of `unit` (its first presenter there).
    func publish(_ unit: Int64) {
        let unitFolder = Self.unitFolder(folder, unit)
        mkdir(unitFolder, 0o700)
        let fd = open(unitFolder + "/" + name, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// Withdraws this process as a presenter of `unit` (its last presenter there is gone).
    func unpublish(_ unit: Int64) {
        let unitFolder = Self.unitFolder(folder, unit)
        unlink(unitFolder + "/" + name)
        rmdir(unitFolder)  // fails while others present it: fine
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection >= 0 { _ = fcntl(connection, F_SETFD, FD_CLOEXEC) }
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let thread = Thread { [self] in self.serve(connection) }
            thread.start()
        }
    }

    /// One request: ask the presenters, answer, then wait for the coordinator to finish (the
    /// connection closing) and run the reacquirers.
    private func serve(_ connection: CInt) {
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(connection, &buffer, buffer.count, 0)
        guard count > 0, let request = PresenterRequest(Data(buffer[..<count])) else { return }
        let outcome = Self.waitFor { await self.registry.prepare(request, excluding: nil) }
        switch outcome {
        case .failure(let error):
            _ = Array("ERR \(error)".utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        case .success(let reacquirers):
            _ = Array("OK".utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            while recv(connection, &buffer, buffer.count, 0) > 0 {}  // until the coordinator closes
            if !reacquirers.isEmpty {
                Self.waitFor { for reacquire in reacquirers { await reacquire() } }
            }
        }
    }

    /// Runs async work from a plain thread and waits for it.
    @discardableResult
    static func waitFor<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        Task(executorPreference: PresenterExecutor.shared) {
            let value = await work()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}
