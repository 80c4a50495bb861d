/// Why a manifest or a JSON value is not acceptable: what is wrong, and where in the text.
struct JSONProblem: Error {
    /// What is wrong, as a phrase ("“formatVersion” must be an integer, not a string").
    var message: String
    /// The byte offset in the text where the problem is, if it is at one place.
    var offset: Int?

    init(_ message: String, at offset: Int? = nil) {
        self.message = message
        self.offset = offset
    }

    /// The message with its place as "line L, column C" (columns count bytes, from 1).
    func located(in bytes: [UInt8]) -> String {
        guard let offset else { return message }
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return "\(message) (line \(line), column \(offset - lineStart + 1))"
    }
}

/// At most `limit` characters of `text` for a message, with "…" if cut.
func excerpt(_ text: some StringProtocol, limit: Int = 40) -> String {
    text.count <= limit ? String(text) : String(text.prefix(limit)) + "…"
}
