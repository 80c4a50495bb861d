/// Values by key in two generations of at most `limit` each: how the version store's caches stay
/// bounded in a process that runs for months. A new value goes into the young generation; when it
/// is full it becomes the old one and the oldest is dropped; a value found in the old generation
/// moves back to the young one. Values used again and again stay; values used once leave after
/// two generations.
package struct Generations<Value> {
    private var young: [String: Value] = [:]
    private var old: [String: Value] = [:]
    /// Values per generation.
    package let limit: Int

    package init(limit: Int) {
        self.limit = limit
    }

    /// How many values it holds (at most twice ``limit``).
    package var count: Int { young.count + old.count }

    /// The value for `key`, moved to the young generation if it was in the old one.
    package mutating func value(for key: String) -> Value? {
        if let value = young[key] { return value }
        guard let value = old.removeValue(forKey: key) else { return nil }
        insert(value, for: key)
        return value
    }

    /// Keeps `value` for `key` in the young generation (replacing what was known).
    package mutating func insert(_ value: Value, for key: String) {
        old[key] = nil
        young[key] = value
        if young.count >= limit {
            old = young
            young = [:]
        }
    }

    /// Forgets `key`.
    package mutating func removeValue(for key: String) {
        young[key] = nil
        old[key] = nil
    }
}
