import Foundation
import Logging
import Synchronization

/// Autosave: a document with unsaved changes saves itself after a quiet period.
extension Document {
    /// When the document saves itself (see ``AutosavePolicy``); nil turns autosave off. The
    /// default is ``AutosavePolicy/standard``: 2 s after the last change, at most 30 s after the
    /// first unsaved one. A document that was opened from its file, or saved, autosaves in
    /// place (unless ``AutosavePolicy/autosavesInPlace`` is false); a new one that was never
    /// saved autosaves elsewhere, to a draft in ``autosaveDraftsFolder``.
    public var autosavePolicy: AutosavePolicy? {
        get { lifecycle.withLock { $0.autosavePolicy } }
        set {
            let task = lifecycle.withLock { lifecycle -> Task<Void, Never>? in
                lifecycle.autosavePolicy = newValue
                defer { lifecycle.autosaveTask = nil }
                return lifecycle.autosaveTask
            }
            task?.cancel()
            if hasUnsavedChanges { scheduleAutosave(restarting: true) }
        }
    }

    /// Where the last autosave elsewhere wrote the content, if any.
    public var autosavedContentsURL: URL? { lifecycle.withLock { $0.autosavedContentsURL } }

    /// Notes a change's time and makes sure an autosave loop runs.
    /// `keepingTimes`: not a new change (a save ended with changes left): the waits run on
    /// from the changes' own times.
    func scheduleAutosave(restarting: Bool = false, keepingTimes: Bool = false) {
        let start = lifecycle.withLock { lifecycle -> (any AutosaveClock)? in
            guard let policy = lifecycle.autosavePolicy else { return nil }
            let now = policy.clock.now
            if lifecycle.firstUnsavedChange == nil || restarting { lifecycle.firstUnsavedChange = now }
            if !keepingTimes || lifecycle.lastChange == nil { lifecycle.lastChange = now }
            return lifecycle.autosaveTask == nil ? policy.clock : nil
        }
        guard start != nil else { return }
        let task = Task.detached { [weak self] in await Self.runAutosave(self.map(WeakDocument.init)) }
        let keep = lifecycle.withLock { lifecycle -> Bool in
            guard lifecycle.autosaveTask == nil else { return false }
            lifecycle.autosaveTask = task
            return true
        }
        if !keep { task.cancel() }
    }

    /// The autosave loop: waits until the quiet period or the maximum delay has passed, saves,
    /// and retries failures with back-off; ends when nothing is left to save.
    static func runAutosave(_ weakDocument: WeakDocument<Document>?) async {
        var failures = 0
        while let weakDocument, !Task.isCancelled {
            guard let next = weakDocument.document?.nextAutosave() else { return }
            switch next {
            case .wait(let clock, let deadline):
                do { try await clock.sleep(until: deadline) } catch { return }
            case .saveNow:
                guard let document = weakDocument.document else { return }
                if await document.autosave() {
                    failures = 0
                } else {
                    failures += 1
                    document.scheduleRetry(afterFailures: failures)
                }
            }
        }
    }

    enum AutosaveStep {
        case wait(any AutosaveClock, Duration)
        case saveNow
    }

    /// What the loop does next; nil (and the loop is forgotten) when nothing needs saving.
    func nextAutosave() -> AutosaveStep? {
        let current = state.withLock { $0.changeCount }
        let dirty = hasUnsavedChanges && !documentState.contains(.closed)
        return lifecycle.withLock { lifecycle -> AutosaveStep? in
            // Autosaved elsewhere already (a draft holds these changes): nothing to do until the next change.
            let drafted = lifecycle.draftedChangeCount == current
            // A save of these changes is running: when it ends, a change made meanwhile schedules again.
            let beingSaved = lifecycle.savesInFlight.contains(current)
            guard dirty, !drafted, !beingSaved, let policy = lifecycle.autosavePolicy, let first = lifecycle.firstUnsavedChange,
                let last = lifecycle.lastChange
            else {
                lifecycle.autosaveTask = nil
                lifecycle.retryAt = nil
                if !dirty { lifecycle.firstUnsavedChange = nil }
                return nil
            }
            let now = policy.clock.now
            if let retryAt = lifecycle.retryAt {
                guard now >= retryAt else { return .wait(policy.clock, retryAt) }
                lifecycle.retryAt = nil
                return .saveNow
            }
            let deadline = min(last + policy.quietPeriod, first + policy.maximumDelay)
            return now >= deadline ? .saveNow : .wait(policy.clock, deadline)
        }
    }

    /// After `failures` failed autosaves in a row: the next try waits ``AutosavePolicy/retryDelay``,
    /// doubled for each further failure, at most ``AutosavePolicy/maximumDelay``.
    func scheduleRetry(afterFailures failures: Int) {
        lifecycle.withLock { lifecycle in
            guard let policy = lifecycle.autosavePolicy else { return }
            var wait = policy.retryDelay
            for _ in 1..<max(1, min(failures, 30)) { wait = min(wait * 2, policy.maximumDelay) }
            lifecycle.retryAt = policy.clock.now + wait
        }
    }

    /// One autosave: in place when the document has a file (and the policy autosaves in
    /// place), else elsewhere, to its draft (see Recovery/). True when it succeeded (or had
    /// nothing to do).
    func autosave() async -> Bool {
        let inPlace = hasLocation && (autosavePolicy?.autosavesInPlace ?? true)
        do {
            if inPlace {
                try await save(to: fileURL, for: .autosaveInPlace)
            } else {
                try await autosaveToDraft()
            }
            return true
        } catch {
            return false  // logged, in lastSaveError and posted as saveFailed (logAutosaveFailure)
        }
    }

    /// Logs a failed autosave (a warning naming the item or folder and what to do), before the
    /// `saveFailed` event: no one asked for the save, so its error must not go unseen.
    static func logAutosaveFailure(_ operation: SaveOperation, _ error: DocumentKitError) {
        guard operation == .autosaveInPlace || operation == .autosaveElsewhere else { return }
        autosaveLogger.warning("Autosave failed: \(error)")
    }

    /// Whether the document's file exists as this document read or wrote it (opened, or saved once).
    var hasLocation: Bool { state.withLock { $0.base != nil } }
}

/// A weak reference to a document, for the autosave loop (which must not keep it alive).
struct WeakDocument<D: AnyObject & Sendable>: @unchecked Sendable {
    weak var document: D?
    init(_ document: D) { self.document = document }
}

private let autosaveLogger = Logger(label: "DocumentKit.autosave")
