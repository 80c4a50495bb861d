/// Values by key in the order they were first kept: what a bounded cache of the server drops
/// first (oldest kept first out: cheap, and bounded).
struct KeptInOrder<Value> {
    private var entries: [String: Value] = [:]
    private var order: [String] = []

    /// The value kept for `key`.
    subscript(key: String) -> Value? { entries[key] }

    var count: Int { entries.count }

    /// Keeps `value` for `key` (in its first place if one was kept for it); returns the one it replaced.
    @discardableResult
    mutating func keep(_ value: Value, for key: String) -> Value? {
        let old = entries.updateValue(value, forKey: key)
        if old == nil { order.append(key) }
        return old
    }

    /// Removes the value kept for `key` and returns it.
    @discardableResult
    mutating func remove(_ key: String) -> Value? {
        guard let gone = entries.removeValue(forKey: key) else { return nil }
        order.removeAll { $0 == key }
        return gone
    }

    /// Removes the value kept first and returns it; nil when there is none.
    mutating func removeOldest() -> Value? {
        while !order.isEmpty {
            if let gone = entries.removeValue(forKey: order.removeFirst()) { return gone }
        }
        return nil
    }

    mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
    }
}
