import Foundation
import Synchronization

/// The coordinated access a piece of a document's I/O takes before it runs (see
/// `Document.perform(coordinating:_:)`).
struct LaneAccess: Sendable {
    /// A write (else a read).
    var writing: Bool
    /// The item; nil: the document's file when the work's turn comes.
    var url: URL?

    static func reading(_ url: URL? = nil) -> LaneAccess { LaneAccess(writing: false, url: url) }
    static func writing(_ url: URL? = nil) -> LaneAccess { LaneAccess(writing: true, url: url) }
}

/// The coordination a piece of I/O runs inside, taken before it came to its thread: a
/// coordination of the same item inside it runs at once, with the URL granted then.
struct LaneGrant: Sendable {
    let requested: URL
    let writing: Bool
    let granted: URL

    @TaskLocal static var current: LaneGrant?

    /// Whether it covers a coordinated access of `url` (a read, or a write if it is one).
    func covers(_ url: URL, writing: Bool) -> Bool {
        (self.writing || !writing) && url.standardizedFileURL.path == requested.standardizedFileURL.path
    }
}

/// How many documents' coordinated I/O may be under way at once in the process (each holds a
/// descriptor of the coordination lock file while it is): more wait their turn, without a thread.
final class CoordinatedIOSlots: Sendable {
    /// The slots of the process.
    static let shared = CoordinatedIOSlots(limit: limit)

    /// 256: enough that documents waiting for other processes' locks don't hold up the others.
    static let limit = 256

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(limit: Int) { state = Mutex(State(free: limit)) }

    /// Waits for a free slot and takes it.
    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Gives a slot back (to the first waiting, if any).
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
