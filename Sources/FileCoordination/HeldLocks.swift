#if canImport(Glibc)
import Glibc
#endif
import CDocumentKitShims
import DocumentKitSystem
import Foundation
import SystemPackage

/// The locks one coordination holds on its own open file description of the lock file.
final class HeldLocks: @unchecked Sendable {
    // @unchecked: used by one coordination at a time (acquire, then the accessor, then release),
    // never shared between threads concurrently.
    private let namespace: CoordinationNamespace
    private let fd: CInt
    private(set) var held: [LockPlan.Lock] = []
    /// This coordination's hold, ended by ``releaseAll()``.
    let holder: LockPlan.Holder

    init(namespace: CoordinationNamespace) throws(DocumentKitError) {
        self.namespace = namespace
        self.fd = try namespace.takeDescription()
        self.holder = LockPlan.Holder(lockFile: namespace.lockFile)
    }

    /// Takes `lock` now if no other coordination holds a conflicting one; false if one does.
    func tryTake(_ lock: LockPlan.Lock) throws(DocumentKitError) -> Bool {
        while true {
            if dk_ofd_lock(fd, lock.offset, 1, Int32(lock.mode.rawValue), 0) == 0 {
                if held.isEmpty { held.reserveCapacity(8) }
                var taken = lock
                taken.holder = holder
                held.append(taken)
                return true
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EACCES: return false
            default:
                throw DocumentKitError(Errno(rawValue: errno), operation: .open, path: lock.purpose.description, step: "locking (F_OFD_SETLK)")
            }
        }
    }

    /// Releases every lock and gives the description back.
    func releaseAll() {
        holder.end()
        // One call unlocks every byte this open file description holds.
        if !held.isEmpty { _ = dk_ofd_lock(fd, 0, 0, 0, 0) }
        held.removeAll()
        namespace.returnDescription(fd)
    }
}

/// How a waiting coordination polls: first quickly, then backing off to `maximumDelay`.
struct Backoff {
    private(set) var delay: Duration = .microseconds(20)
    let maximumDelay: Duration = .milliseconds(4)

    mutating func next() -> Duration {
        defer { delay = min(delay * 2, maximumDelay) }
        return delay
    }
}
