/// The state of a document, as `UIDocument.State` has it. An empty set is the normal state.
public struct DocumentState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Open and in order.
    public static let normal: DocumentState = []
    /// Not open: never opened, or closed.
    public static let closed = DocumentState(rawValue: 1 << 0)
    /// There are unresolved conflict versions.
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    /// The last save failed; the edits are still in memory.
    public static let savingError = DocumentState(rawValue: 1 << 2)
    /// Edits are not allowed now (for example while a reload runs, or for a read-only file).
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    /// Another program deleted the file; the content is still in memory, and the next save
    /// writes the file again.
    public static let fileDeleted = DocumentState(rawValue: 1 << 5)

    public var description: String {
        if isEmpty { return "normal" }
        let names: [(DocumentState, String)] = [
            (.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
            (.editingDisabled, "editingDisabled"), (.fileDeleted, "fileDeleted"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: ", ")
    }
}
