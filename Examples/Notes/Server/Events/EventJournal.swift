import Foundation

/// The last events of the feed, for clients that reconnect with `Last-Event-ID`: a ring of a
/// fixed number of slots, all made when the server starts.
///
/// A long-running server must not grow while its load stays the same: a journal that grows to
/// its capacity over the first hours (and an array that doubles on the way) looked like a leak
/// in the soak. So the ring's slots exist from the start, and an event takes no memory of its
/// own in its slot: a note's id is kept as a `UUID`, a tag as its 32-byte digest (``Text``); only a
/// title longer than Swift keeps inline (15 bytes) allocates.
struct EventJournal {
    /// A string the journal keeps without allocating when it is a canonical UUID or a quoted
    /// SHA-256 digest (what ids and tags are); any other text is kept as it is.
    enum Text: Sendable, Equatable {
        case uuid(UUID)
        /// A quoted digest of 64 lowercase hex digits, as 32 bytes.
        case digest(UInt64, UInt64, UInt64, UInt64)
        case other(String)

        init(_ string: String) {
            if string.utf8.count == 36, let uuid = UUID(uuidString: string), uuid.uuidString == string {
                self = .uuid(uuid)
            } else if let words = Self.digestWords(of: string) {
                self = .digest(words.0, words.1, words.2, words.3)
            } else {
                self = .other(string)
            }
        }

        var string: String {
            switch self {
            case .uuid(let uuid): return uuid.uuidString
            case .digest(let a, let b, let c, let d):
                let hex = [a, b, c, d].map { word in
                    let digits = String(word, radix: 16)
                    return String(repeating: "0", count: 16 - digits.count) + digits
                }
                return "\"" + hex.joined() + "\""
            case .other(let string): return string
            }
        }

        /// `"` + 64 lowercase hex digits + `"` as four words; nil for anything else.
        private static func digestWords(of string: String) -> (UInt64, UInt64, UInt64, UInt64)? {
            let bytes = Array(string.utf8)
            guard bytes.count == 66, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return nil }
            var words: [UInt64] = []
            for start in stride(from: 1, to: 65, by: 16) {
                var word: UInt64 = 0
                for byte in bytes[start..<start + 16] {
                    let value: UInt8
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
                    default: return nil
                    }
                    word = word << 4 | UInt64(value)
                }
                words.append(word)
            }
            return (words[0], words[1], words[2], words[3])
        }
    }

    /// How many events it keeps.
    let capacity: Int
    private var slots: [EventHub.Event]
    /// Where the next event goes.
    private var next = 0
    private(set) var count = 0

    /// A journal of `capacity` slots (at least one), each made now.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        let empty = EventHub.Event(sequence: 0, kind: .changed, id: "", title: nil, etag: nil, conflicts: nil)
        slots = Array(repeating: empty, count: self.capacity)
    }

    /// Keeps `event`, forgetting the oldest when full.
    mutating func append(_ event: EventHub.Event) {
        slots[next] = event
        next = (next + 1) % capacity
        count = min(count + 1, capacity)
    }

    /// The oldest event kept.
    var first: EventHub.Event? {
        count == 0 ? nil : slots[(next - count + capacity) % capacity]
    }

    /// The events kept whose sequence is after `sequence`, oldest first.
    func events(after sequence: UInt64) -> [EventHub.Event] {
        var found: [EventHub.Event] = []
        for offset in 0..<count {
            let event = slots[(next - count + offset + capacity) % capacity]
            if event.sequence > sequence { found.append(event) }
        }
        return found
    }
}
