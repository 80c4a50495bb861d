import Synchronization

/// Values many records repeat (a library's URL, a format and version), each kept once and
/// referred to by a 4-byte index: a record then spends the padding after its enums on them.
/// Values are never removed (a process meets few libraries and formats).
final class InternTable<Value: Hashable & Sendable>: Sendable {
    private let state = Mutex<(values: [Value], indexes: [Value: UInt32])>(([], [:]))

    /// The index of `value`, adding it if it is new.
    func index(of value: Value) -> UInt32 {
        state.withLock { state in
            if let index = state.indexes[value] { return index }
            let index = UInt32(state.values.count)
            state.values.append(value)
            state.indexes[value] = index
            return index
        }
    }

    /// The value at `index` (one ``index(of:)`` gave).
    func value(at index: UInt32) -> Value {
        state.withLock { $0.values[Int(index)] }
    }
}
