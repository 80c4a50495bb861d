import Synchronization

/// One shared copy of each string that many records repeat (format identifiers): a record then
/// holds a reference to it, not its own copy.
enum Interned {
    private static let table = Mutex<Set<String>>([])

    /// The shared copy of `text`.
    static func string(_ text: String) -> String {
        guard text.utf8.count > 15 else { return text }  // Held inline: nothing to share.
        return table.withLock { table in
            if let shared = table.firstIndex(of: text) { return table[shared] }
            if table.count < 1024 { table.insert(text) }
            return text
        }
    }
}
