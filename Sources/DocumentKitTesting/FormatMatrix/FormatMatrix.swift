import Foundation

/// A format compatibility matrix: for every fixture of a format and every reader version, what
/// opening it must do. Run it against your app with ``run(fixtures:probe:)``.
///
/// Write the table as tab-separated text, one cell per line, with this header (lines starting
/// with `#` are comments):
///
/// ```text
/// fixture	reader	outcome	message	round-trip
/// v1/fixtures/trip.note	1	read-write	-	-
/// v1/fixtures/trip.note	2	migrated-to-2	-	-
/// v2/fixtures/groceries.note	1	read-write-preserving-unknown	-	2
/// v3/fixtures/blank.note	1	refused	format 3, this app reads up to 1	-
/// ```
///
/// - `fixture`: the fixture's path in the fixtures folder;
/// - `reader`: the reader version;
/// - `outcome`: `read-write`, `read-write-preserving-unknown`, `read-only`, `refused` or
///   `migrated-to-N`;
/// - `message`: a phrase the outcome's message must contain, or `-`;
/// - `round-trip`: a reader version that must see the document the same after this reader edited
///   it (a newer reader still sees what an older one can't show), or `-`.
public struct FormatMatrix: Sendable {
    /// What opening a document does, for one reader version.
    public enum Outcome: Hashable, Sendable, CustomStringConvertible {
        /// It opens for reading and writing, and holds nothing the reader doesn't understand.
        case readWrite
        /// It opens for reading and writing; a save keeps what the reader doesn't understand.
        case readWritePreservingUnknown
        /// It opens for reading only.
        case readOnly
        /// It doesn't open: the message says why.
        case refused
        /// It opens upgraded in memory to this version, and is written in it at the next save.
        case migrated(to: Int)

        /// An outcome from its name in a table (`read-only`, `migrated-to-3`, …).
        public init?(name: String) {
            switch name {
            case "read-write": self = .readWrite
            case "read-write-preserving-unknown": self = .readWritePreservingUnknown
            case "read-only": self = .readOnly
            case "refused": self = .refused
            default:
                guard name.hasPrefix("migrated-to-"), let version = Int(name.dropFirst("migrated-to-".count)) else {
                    return nil
                }
                self = .migrated(to: version)
            }
        }

        /// Whether a document that opens this way may be saved.
        public var allowsWriting: Bool {
            switch self {
            case .readWrite, .readWritePreservingUnknown, .migrated: true
            case .readOnly, .refused: false
            }
        }

        /// The outcome's name in a table.
        public var description: String {
            switch self {
            case .readWrite: "read-write"
            case .readWritePreservingUnknown: "read-write-preserving-unknown"
            case .readOnly: "read-only"
            case .refused: "refused"
            case .migrated(let version): "migrated-to-\(version)"
            }
        }
    }

    /// One cell: a fixture, a reader version, and what must happen.
    public struct Cell: Hashable, Sendable, CustomStringConvertible {
        /// The fixture's path, relative to the fixtures folder.
        public var fixture: String
        /// The reader version.
        public var readerVersion: Int
        /// What opening the fixture as that reader must do.
        public var outcome: Outcome
        /// A phrase the outcome's message must contain, if any.
        public var message: String?
        /// A reader version that must see the document the same after this reader edited it.
        public var roundTripReaderVersion: Int?

        /// A cell of the matrix.
        public init(fixture: String, readerVersion: Int, outcome: Outcome, message: String? = nil, roundTripReaderVersion: Int? = nil) {
            self.fixture = fixture
            self.readerVersion = readerVersion
            self.outcome = outcome
            self.message = message
            self.roundTripReaderVersion = roundTripReaderVersion
        }

        public var description: String { "\(fixture) × reader \(readerVersion)" }
    }

    /// The cells, in the order of the table.
    public var cells: [Cell]

    /// A matrix of the given cells.
    public init(cells: [Cell]) { self.cells = cells }

    /// The header line of a table.
    public static let header = ["fixture", "reader", "outcome", "message", "round-trip"]

    /// Reads a table (see ``FormatMatrix``) from a file.
    ///
    /// - Throws: ``FormatMatrixError`` naming the file and the line of a malformed table.
    public init(contentsOf url: URL) throws {
        let text: String
        do { text = try String(contentsOf: url, encoding: .utf8) } catch {
            throw FormatMatrixError(path: url.path, line: nil, problem: "it can't be read as UTF-8 text: \(error.localizedDescription)")
        }
        try self.init(table: text, path: url.path)
    }

    /// Reads a table (see ``FormatMatrix``) from its text.
    ///
    /// - Parameter path: The table's name in errors.
    /// - Throws: ``FormatMatrixError`` naming the line of a malformed table.
    public init(table: String, path: String = "(table)") throws {
        var cells: [Cell] = []
        var sawHeader = false
        var seen = Set<String>()
        for (index, rawLine) in table.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty, !line.hasPrefix("#") else { continue }
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func fail(_ problem: String) -> FormatMatrixError { FormatMatrixError(path: path, line: index + 1, problem: problem) }
            guard sawHeader else {
                guard columns == Self.header else { throw fail("the header must be \(Self.header.joined(separator: " TAB "))") }
                sawHeader = true
                continue
            }
            guard columns.count == Self.header.count else { throw fail("\(columns.count) columns instead of \(Self.header.count)") }
            guard !columns[0].isEmpty else { throw fail("no fixture") }
            guard let reader = Int(columns[1]), reader > 0 else { throw fail("the reader version “\(columns[1])” is not a positive integer") }
            guard let outcome = Outcome(name: columns[2]) else { throw fail("unknown outcome “\(columns[2])”") }
            let message = columns[3] == "-" || columns[3].isEmpty ? nil : columns[3]
            var roundTrip: Int?
            if columns[4] != "-" && !columns[4].isEmpty {
                guard let version = Int(columns[4]), version > 0 else { throw fail("the round-trip version “\(columns[4])” is not a positive integer") }
                guard outcome.allowsWriting else { throw fail("a round trip needs an outcome that allows writing, not \(outcome)") }
                roundTrip = version
            }
            guard seen.insert("\(columns[0])\t\(reader)").inserted else { throw fail("\(columns[0]) × reader \(reader) appears twice") }
            cells.append(Cell(fixture: columns[0], readerVersion: reader, outcome: outcome, message: message, roundTripReaderVersion: roundTrip))
        }
        guard sawHeader else { throw FormatMatrixError(path: path, line: nil, problem: "it has no header line") }
        self.cells = cells
    }

    /// The fixtures of the matrix, in the order they first appear.
    public var fixtures: [String] {
        var seen = Set<String>()
        return cells.map(\.fixture).filter { seen.insert($0).inserted }
    }

    /// The reader versions of the matrix, sorted.
    public var readerVersions: [Int] { Set(cells.map(\.readerVersion)).sorted() }
}

/// A malformed matrix table.
public struct FormatMatrixError: Error, Sendable, CustomStringConvertible {
    /// The table's path.
    public var path: String
    /// The line of the problem (from 1), if it is on one line.
    public var line: Int?
    /// What is wrong.
    public var problem: String

    public var description: String {
        "The format matrix “\(path)”\(line.map { ", line \($0)," } ?? "") is malformed: \(problem)."
    }
}
