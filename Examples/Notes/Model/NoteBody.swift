import Foundation

/// The body of a format 3 note, `body.json`: a list of blocks, one per line of the text
/// (`Formats/notes/v3/SPEC.md`). Text → blocks → text gives the same text back.
struct NoteBody: Codable, Equatable, Sendable {
    /// One line of the body.
    enum Block: Equatable, Sendable {
        /// `# Title` … `###### Title`.
        case heading(level: Int, text: String)
        /// `- [ ] to do`, `- [x] done`.
        case task(done: Bool, text: String)
        /// Any other line, possibly empty.
        case paragraph(String)
    }

    var blocks: [Block]
    /// Whether the text ends with a line break (`finalNewline`, absent when true).
    var finalNewline: Bool

    /// The blocks of `text`.
    init(text: String) {
        guard !text.isEmpty else {
            blocks = []
            finalNewline = true
            return
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        finalNewline = text.hasSuffix("\n")
        if finalNewline { lines.removeLast() }
        blocks = lines.map { Block(line: $0) }
    }

    /// The body as text.
    var text: String {
        blocks.isEmpty ? "" : blocks.map(\.line).joined(separator: "\n") + (finalNewline ? "\n" : "")
    }

    /// `body.json`: sorted keys, a newline at the end.
    func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// Reads `body.json`.
    ///
    /// - Throws: `NoteFormat.Problem` saying what is wrong.
    init(jsonData data: Data) throws {
        do { self = try JSONDecoder().decode(NoteBody.self, from: data) } catch {
            throw NoteFormat.Problem("\(NoteFormat.blocksName) is malformed: \(DecodingProblem(error))")
        }
    }

    private enum CodingKeys: String, CodingKey { case blocks, finalNewline }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        blocks = try container.decode([Block].self, forKey: .blocks)
        finalNewline = try container.decodeIfPresent(Bool.self, forKey: .finalNewline) ?? true
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(blocks, forKey: .blocks)
        if !finalNewline { try container.encode(false, forKey: .finalNewline) }
    }
}

extension NoteBody.Block: Codable {
    private enum CodingKeys: String, CodingKey { case kind, text, level, done }

    /// The block a line of text stands for.
    init(line: Substring) {
        let hashes = line.prefix { $0 == "#" }.count
        if (1...6).contains(hashes), line.dropFirst(hashes).first == " " {
            self = .heading(level: hashes, text: String(line.dropFirst(hashes + 1)))
        } else if line.hasPrefix("- [ ] ") || line.hasPrefix("- [x] ") {
            self = .task(done: line.hasPrefix("- [x]"), text: String(line.dropFirst(6)))
        } else {
            self = .paragraph(String(line))
        }
    }

    /// The line of text the block stands for.
    var line: String {
        switch self {
        case .heading(let level, let text): String(repeating: "#", count: level) + " " + text
        case .task(let done, let text): (done ? "- [x] " : "- [ ] ") + text
        case .paragraph(let text): text
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .text)
        switch try container.decode(String.self, forKey: .kind) {
        case "heading":
            let level = try container.decode(Int.self, forKey: .level)
            guard (1...6).contains(level) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .level, in: container, debugDescription: "a heading's level is 1 to 6, not \(level)")
            }
            self = .heading(level: level, text: text)
        case "task": self = .task(done: try container.decode(Bool.self, forKey: .done), text: text)
        case "paragraph": self = .paragraph(text)
        case let kind:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "unknown block kind “\(kind.prefix(40))”")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .heading(let level, let text):
            try container.encode("heading", forKey: .kind)
            try container.encode(level, forKey: .level)
            try container.encode(text, forKey: .text)
        case .task(let done, let text):
            try container.encode("task", forKey: .kind)
            try container.encode(done, forKey: .done)
            try container.encode(text, forKey: .text)
        case .paragraph(let text):
            try container.encode("paragraph", forKey: .kind)
            try container.encode(text, forKey: .text)
        }
    }
}
