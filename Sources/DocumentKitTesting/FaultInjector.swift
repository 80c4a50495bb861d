import DocumentKit
import Synchronization
import SystemPackage

/// Makes chosen system calls fail, to test what every step of a save leaves behind.
///
/// ```swift
/// let faults = FaultInjector()
/// faults.fail(call: 3, with: .noSpace)          // the third call of the save fails with ENOSPC
/// try? wrapper.write(to: url, options: SaveOptions(fileSystem: faults.fileSystem))
/// print(faults.trace)                            // every call the save made, in order
/// ```
public final class FaultInjector: Sendable {
    /// One call made through the injector's file system.
    public struct Call: Sendable, Hashable, CustomStringConvertible {
        /// Which call.
        public var call: SystemCall
        /// The name it was about.
        public var name: String
        /// The errno it was made to fail with, if any.
        public var injected: Errno?
        public var description: String {
            "\(call)(\(name))" + (injected.map { " -> \($0.readableDescription)" } ?? "")
        }
    }

    private struct State {
        var count = 0
        var failures: [Int: Errno] = [:]
        var rules: [(call: SystemCall, errno: Errno, once: Bool, name: String?)] = []
        var trace: [Call] = []
    }

    private let state = Mutex(State())
    private let refusesExchange: Bool

    /// An injector that fails nothing until told to. With `refusingExchange`, the file system
    /// behaves as one without `renameat2(RENAME_EXCHANGE)` (NFS, some FUSE).
    public init(refusingExchange: Bool = false) { self.refusesExchange = refusingExchange }

    /// Makes the `number`th call (counting from 1, over all calls) fail with `errno`.
    public func fail(call number: Int, with errno: Errno) {
        state.withLock { $0.failures[number] = errno }
    }

    /// Makes every call of kind `call` fail with `errno` (or only the next one, with `once`);
    /// with `name`, only the calls about that name (a path as the call was given it).
    public func fail(_ call: SystemCall, with errno: Errno, once: Bool = false, name: String? = nil) {
        state.withLock { $0.rules.append((call, errno, once, name)) }
    }

    /// Forgets the failures and the trace.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// The calls made so far, in order.
    public var trace: [Call] { state.withLock { $0.trace } }

    /// How many calls were made so far.
    public var callCount: Int { state.withLock { $0.count } }

    /// The file system to pass in `SaveOptions` (or to reading).
    public var fileSystem: FileSystem {
        FileSystem(interceptor: { [self] call, name in self.intercept(call, name) }, refusesExchange: refusesExchange)
    }

    private func intercept(_ call: SystemCall, _ name: String) -> Errno? {
        state.withLock { state in
            state.count += 1
            var injected = state.failures.removeValue(forKey: state.count)
            if injected == nil, let index = state.rules.firstIndex(where: { $0.call == call && ($0.name == nil || $0.name == name) }) {
                injected = state.rules[index].errno
                if state.rules[index].once { state.rules.remove(at: index) }
            }
            state.trace.append(Call(call: call, name: name, injected: injected))
            return injected
        }
    }
}
