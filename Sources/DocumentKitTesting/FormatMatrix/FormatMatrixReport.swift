/// What running a ``FormatMatrix`` found: how many cells were checked, and every failure.
public struct FormatMatrixReport: Sendable, CustomStringConvertible {
    /// One thing that went wrong in one cell.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The cell.
        public var cell: FormatMatrix.Cell
        /// What went wrong.
        public var problem: String

        public var description: String { "\(cell): \(problem)" }
    }

    /// How many cells were checked.
    public var checkedCells: Int
    /// Every failure, in the order of the cells.
    public var failures: [Failure]

    /// Whether every cell behaved as the table says.
    public var isSuccess: Bool { failures.isEmpty }

    public var description: String {
        if failures.isEmpty { return "All \(checkedCells) cells of the format matrix behave as the table says." }
        return "\(failures.count) problem\(failures.count == 1 ? "" : "s") in \(checkedCells) cells of the format matrix:\n"
            + failures.map { "- \($0)" }.joined(separator: "\n")
    }
}
