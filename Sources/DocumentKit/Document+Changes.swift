import Foundation
import Synchronization

/// What a document tracks besides its content: events, change counts, autosave's bookkeeping.
struct Lifecycle {
    var subscribers: [Int: AsyncStream<DocumentEvent>.Continuation] = [:]
    var nextSubscriber = 0
    var autosavePolicy: AutosavePolicy? = .standard
    /// The running autosave loop, if any.
    var autosaveTask: Task<Void, Never>?
    /// When (on the policy's clock) the first change not saved yet, and the last change, were made.
    var firstUnsavedChange: Duration?
    var lastChange: Duration?
    /// When a failed autosave is tried again.
    var retryAt: Duration?
    /// The change counts that saves of the document's own file now running will have saved:
    /// autosave has nothing to do for those.
    var savesInFlight: [Int] = []
    /// Where the last autosave elsewhere went.
    var autosavedContentsURL: URL?
    /// The document's draft entry (recovery data, see Recovery/), while it has one.
    var draft: DraftEntry?
    /// The change count the draft holds (the content autosaved elsewhere last): nothing more to autosave while it is current.
    var draftedChangeCount: Int?
    /// The registration of the document's presenter, while it presents its file.
    var presenterRegistration: PresenterRegistration?
    var presentsFile = true
    /// ``Document/fileType`` as set; nil: the file name's extension.
    var fileType: String?
}

/// Events and change counting.
extension Document {
    /// A new stream of the document's events from now on, in order; several may be open at
    /// once. It ends when the document closes.
    public func events() -> AsyncStream<DocumentEvent> {
        let (stream, continuation) = AsyncStream<DocumentEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = lifecycle.withLock { lifecycle -> Int in
            lifecycle.nextSubscriber += 1
            lifecycle.subscribers[lifecycle.nextSubscriber] = continuation
            return lifecycle.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.lifecycle.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `event` to every stream of ``events()``.
    func post(_ event: DocumentEvent) {
        let subscribers = lifecycle.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    /// Changes ``documentState`` and announces it when it changed.
    func changeState(_ change: (inout DocumentState) -> Void) {
        let (before, after) = state.withLock { state -> (DocumentState, DocumentState) in
            let before = state.documentState
            change(&state.documentState)
            return (before, state.documentState)
        }
        if before != after { post(.stateChanged(after)) }
    }

    /// Counts a change made some other way than ``update(as:_:)-5rxph`` (an undo manager of the
    /// app's, say), as `NSDocument.updateChangeCount(_:)`: `.done`, `.undone` and `.redone`
    /// change the count (and schedule an autosave), `.cleared` marks the content as the
    /// file's.
    public func updateChangeCount(_ change: DocumentChange) {
        state.withLock { Self.count(change, in: &$0) }
        if change == .cleared {
            lifecycle.withLock { $0.firstUnsavedChange = nil }
        } else {
            scheduleAutosave()
        }
    }

    /// The change count now: give it to ``updateChangeCount(withToken:for:)`` when a save that
    /// started now has finished, so that changes made while it ran stay unsaved.
    public func changeCountToken() -> ChangeCountToken {
        state.withLock { ChangeCountToken(count: $0.changeCount) }
    }

    /// Marks the changes counted up to `token` as saved by `operation` (a save to another
    /// file, ``SaveOperation/saveTo``, marks nothing).
    public func updateChangeCount(withToken token: ChangeCountToken, for operation: SaveOperation) {
        guard operation != .saveTo && operation != .autosaveElsewhere else { return }
        let clean = state.withLock { state -> Bool in
            state.savedChangeCount = token.count
            return state.changeCount == state.savedChangeCount
        }
        if clean { lifecycle.withLock { $0.firstUnsavedChange = nil } }
    }

    /// Moves the content's state id: a change done gets a new id, an undone one goes back to
    /// the id before it, a redone one forward again. The content is saved when its id is the
    /// saved one, so an undo back to the saved state is clean, and a new change after an undo
    /// is not.
    static func count(_ change: DocumentChange, in state: inout State) {
        switch change {
        case .done:
            state.undoneIDs.removeAll()
            state.earlierIDs.append(state.changeCount)
            state.lastID += 1
            state.changeCount = state.lastID
        case .undone:
            guard let earlier = state.earlierIDs.popLast() else { return }
            state.undoneIDs.append(state.changeCount)
            state.changeCount = earlier
        case .redone:
            guard let later = state.undoneIDs.popLast() else { return }
            state.earlierIDs.append(state.changeCount)
            state.changeCount = later
        case .cleared:
            state.savedChangeCount = state.changeCount
        }
    }
}
