import Foundation

/// The library's change feed (`GET /api/events`): one event per new state of a note, whoever
/// made it (this server, another process through DocumentKit, or a shell and a sync engine
/// without it), each with the note's new `ETag`.
///
/// Events are numbered `EPOCH:SEQ`: the epoch is new with every server process, the sequence
/// grows by one per event. The last ``capacity`` events are kept (``EventJournal``: its memory is
/// fixed from the start), so that a client that comes back with `Last-Event-ID` gets what it
/// missed; one from another epoch, or further behind, gets a `reset` event (list again). A note's state is published once: the same note with the
/// same tag again (the server's own write, seen once more by the index) is not a new event, unless
/// its number of unresolved conflict versions changed (a conflict resolved by keeping the note as
/// it is, or one kept from a sync engine's copy, changes no byte of the note).
actor EventHub {
    /// What happened to a note.
    enum Kind: String, Sendable {
        case created, changed, deleted
    }

    /// One event of the feed.
    struct Event: Sendable, Encodable {
        let sequence: UInt64
        let kind: Kind
        private let storedID: EventJournal.Text
        let title: String?
        private let storedTag: EventJournal.Text?
        /// The note's id.
        var id: String { storedID.string }
        /// The note's new tag (quoted); nil when deleted, or when the note can't be read.
        var etag: String? { storedTag?.string }
        /// Where the note is read; nil when deleted. (Made when encoded: the journal keeps thousands of events.)
        var url: String? { kind == .deleted ? nil : APIPath.note(id) }
        /// How many unresolved conflict versions the note has; nil when deleted or not known.
        let conflicts: Int?

        init(sequence: UInt64, kind: Kind, id: String, title: String?, etag: String?, conflicts: Int?) {
            self.sequence = sequence
            self.kind = kind
            storedID = EventJournal.Text(id)
            self.title = title
            storedTag = etag.map(EventJournal.Text.init)
            self.conflicts = conflicts
        }

        private enum CodingKeys: String, CodingKey { case kind, id, title, etag, url, conflicts }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind.rawValue, forKey: .kind)
            try container.encode(id, forKey: .id)
            try container.encode(title, forKey: .title)
            try container.encode(etag, forKey: .etag)
            try container.encode(url, forKey: .url)
            try container.encode(conflicts, forKey: .conflicts)
        }
    }

    /// What a subscriber receives.
    enum Message: Sendable {
        case event(Event)
        /// Nothing happened for a while: a comment keeps proxies and the browser's connection open.
        case heartbeat
    }

    /// Where a subscriber starts.
    enum Start: Sendable {
        /// After these journal events (empty: it is up to date).
        case replay([Event])
        /// Its cursor is of another epoch or older than the journal: it must list again.
        case reset
    }

    /// This process's epoch: 8 hex digits.
    nonisolated let epoch: String
    /// How many events are kept for clients that reconnect.
    nonisolated let capacity: Int
    /// How many messages a slow subscriber may have waiting before it is dropped (it reconnects
    /// and catches up from the journal).
    nonisolated let subscriberBuffer: Int

    private var sequence: UInt64 = 0
    private var journal: EventJournal
    /// What was last published of a note: its tag ("deleted" after a deletion, "unreadable"
    /// without one) and its unresolved conflicts, when known.
    private struct NoteState: Equatable {
        var tag: String
        var conflicts: Int?
    }

    /// The state last published per note id.
    private var lastState: [String: NoteState] = [:]
    private var subscribers: [UUID: AsyncStream<Message>.Continuation] = [:]
    private var finished = false

    init(capacity: Int = 4_096, subscriberBuffer: Int = 1_000) {
        epoch = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        self.capacity = capacity
        journal = EventJournal(capacity: capacity)
        self.subscriberBuffer = subscriberBuffer
    }

    /// The id of an event: `EPOCH:SEQ`.
    nonisolated func identifier(of event: Event) -> String { "\(epoch):\(event.sequence)" }

    /// The id of the feed's current position (a client that connects is primed with it).
    var position: String { "\(epoch):\(sequence)" }

    /// How many clients listen now.
    var subscriberCount: Int { subscribers.count }

    /// Whether a note with tag `etag` would be a new state (its conflicts aside): the caller
    /// counts the note's conflicts only then.
    func isNew(id: String, etag: String?) -> Bool {
        lastState[id]?.tag != etag ?? "unreadable"
    }

    /// Publishes a note's new state, unless it is the state last published for it: the same tag
    /// and, when `conflicts` is given, the same number of unresolved conflicts.
    func publish(_ kind: Kind, id: String, title: String?, etag: String?, conflicts: Int? = nil) {
        let tag = etag ?? "unreadable"
        let last = lastState[id]
        if let last, last.tag == tag, conflicts == nil || conflicts == last.conflicts { return }
        // A note never seen before but already known to the feed as created stays "changed".
        let kind = kind == .created && last != nil && last?.tag != "deleted" ? .changed : kind
        let known = conflicts ?? (last?.tag == tag ? last?.conflicts : nil)
        lastState[id] = NoteState(tag: tag, conflicts: known)
        append(Event(sequence: sequence + 1, kind: kind, id: id, title: title, etag: etag, conflicts: known))
    }

    /// Publishes a note's new state as the API shows it.
    func publish(_ kind: Kind, note: NoteResource) {
        publish(kind, id: note.id, title: note.title, etag: note.etag.isEmpty ? nil : note.etag, conflicts: note.conflicts)
    }

    /// Publishes a deletion, unless it was published already.
    func publishDeletion(id: String, title: String?) {
        guard lastState[id]?.tag != "deleted" else { return }
        lastState[id] = NoteState(tag: "deleted", conflicts: nil)
        append(Event(sequence: sequence + 1, kind: .deleted, id: id, title: title, etag: nil, conflicts: nil))
    }

    /// Remembers a note's current tag (and conflicts, when known) without publishing it (the
    /// state the feed starts from).
    func assume(id: String, etag: String?, conflicts: Int? = nil) {
        lastState[id] = NoteState(tag: etag ?? "unreadable", conflicts: conflicts)
    }

    private func append(_ event: Event) {
        sequence = event.sequence
        journal.append(event)
        for (token, continuation) in subscribers {
            if case .dropped = continuation.yield(.event(event)) {
                // Too slow: it is dropped, and catches up from the journal when it reconnects.
                continuation.finish()
                subscribers[token] = nil
            }
        }
    }

    /// Subscribes a client whose last event was `cursor` (`EPOCH:SEQ`; nil for a new client):
    /// live events from now, and what it missed.
    func subscribe(after cursor: String?) -> (token: UUID, start: Start, stream: AsyncStream<Message>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingOldest(subscriberBuffer))
        let token = UUID()
        if finished {
            continuation.finish()
        } else {
            subscribers[token] = continuation
        }
        return (token, start(after: cursor), stream)
    }

    private func start(after cursor: String?) -> Start {
        guard let cursor, !cursor.isEmpty else { return .replay([]) }
        let parts = cursor.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == epoch, let seen = UInt64(parts[1]), seen <= sequence else { return .reset }
        if let first = journal.first, seen + 1 < first.sequence { return .reset }
        return .replay(journal.events(after: seen))
    }

    func unsubscribe(_ token: UUID) {
        subscribers.removeValue(forKey: token)?.finish()
    }

    /// Sends every subscriber a heartbeat.
    func heartbeat() {
        for continuation in subscribers.values { continuation.yield(.heartbeat) }
    }

    /// Ends every subscriber's stream (at shutdown); later subscribers end at once.
    func finishAll() {
        finished = true
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }
}
