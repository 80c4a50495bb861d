/// A strict, bounded pull parser for JSON text (RFC 8259), keeping the place of every value.
///
/// It never recurses: open containers are a stack, limited to `maximumDepth`, so deeply nested
/// input is an error and never a stack overflow. Values the caller does not want are skipped and
/// returned as the byte range of their exact text.
struct JSONScanner {
    /// The text; validated as UTF-8 by ``validateEncoding()``.
    let bytes: [UInt8]
    /// The offset of the next byte to read.
    private(set) var position = 0
    /// How many containers may be open at once.
    let maximumDepth: Int

    private struct Open {
        let isObject: Bool
        var isFirst = true
    }

    private var open: [Open] = []

    /// A string as it appears in the text: its bytes between the quotes.
    struct StringToken {
        let range: Range<Int>
        let hasEscapes: Bool
    }

    /// A number as it appears in the text.
    struct NumberToken {
        let range: Range<Int>
        /// No fraction and no exponent.
        let isInteger: Bool
    }

    init(_ bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// How many containers are open.
    var depth: Int { open.count }

    // MARK: Encoding and whitespace

    /// Checks that the text is UTF-8 without a byte-order mark.
    func validateEncoding() throws(JSONProblem) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw JSONProblem("the text starts with a byte-order mark, which JSON forbids", at: 0)
        }
        guard String(validating: bytes, as: UTF8.self) == nil else { return }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { offset += scalar.count }
        throw JSONProblem("the text is not valid UTF-8", at: offset)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// Whether only whitespace is left.
    mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return position == bytes.count
    }

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    /// The kinds of JSON values, named in words for messages.
    enum ValueKind: String {
        case object = "an object", array = "an array", string = "a string", boolean = "a Boolean", null = "null"
        case number = "a number", end = "the end of the text", invalid = "an invalid value"
    }

    /// The kind of the next value, from its first character.
    mutating func nextKind() -> ValueKind {
        skipWhitespace()
        guard let byte = peek() else { return .end }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: return .invalid
        }
    }

    // MARK: Containers

    /// Reads `{`, opening an object.
    mutating func openObject() throws(JSONProblem) { try openContainer(object: true) }

    /// Reads `[`, opening an array.
    mutating func openArray() throws(JSONProblem) { try openContainer(object: false) }

    private mutating func openContainer(object: Bool) throws(JSONProblem) {
        skipWhitespace()
        guard peek() == UInt8(ascii: object ? "{" : "[") else {
            throw JSONProblem("expected \(object ? "an object" : "an array"), found \(nextKind().rawValue)", at: position)
        }
        guard open.count < maximumDepth else {
            throw JSONProblem("values are nested more than \(maximumDepth) levels deep", at: position)
        }
        position += 1
        open.append(Open(isObject: object))
    }

    /// The next key of the innermost open object, with the reader placed at its value; nil when
    /// the object ends (the reader is then past its `}`).
    mutating func nextKey() throws(JSONProblem) -> StringToken? {
        guard try nextMember(closing: "}") else { return nil }
        guard peek() == UInt8(ascii: "\"") else { throw JSONProblem("expected a key (a string) in the object", at: position) }
        let key = try scanString()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw JSONProblem("expected “:” after the key", at: position) }
        position += 1
        skipWhitespace()
        return key
    }

    /// Whether the innermost open array has another element (the reader is then at it); false
    /// when the array ends (the reader is then past its `]`).
    mutating func nextElement() throws(JSONProblem) -> Bool {
        try nextMember(closing: "]")
    }

    private mutating func nextMember(closing: Unicode.Scalar) throws(JSONProblem) -> Bool {
        skipWhitespace()
        if peek() == UInt8(ascii: closing) {
            position += 1
            open.removeLast()
            return false
        }
        if open[open.count - 1].isFirst {
            open[open.count - 1].isFirst = false
        } else {
            guard peek() == UInt8(ascii: ",") else {
                let expected = closing == "}" ? "“,” or “}”" : "“,” or “]”"
                throw JSONProblem(peek() == nil ? "the text ends too early" : "expected \(expected)", at: position)
            }
            position += 1
            skipWhitespace()
            if peek() == UInt8(ascii: closing) { throw JSONProblem("a comma before “\(closing)”", at: position) }
        }
        guard peek() != nil else { throw JSONProblem("the text ends too early", at: position) }
        return true
    }

    // MARK: Scalars

    /// Reads a string token (the reader must be at its opening quote).
    mutating func scanString() throws(JSONProblem) -> StringToken {
        let quote = position
        position += 1
        var hasEscapes = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return StringToken(range: (quote + 1)..<(position - 1), hasEscapes: hasEscapes)
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                guard position + 1 < bytes.count else { break }
                switch bytes[position + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    position += 2
                case UInt8(ascii: "u"):
                    guard position + 6 <= bytes.count, bytes[(position + 2)..<(position + 6)].allSatisfy(Self.isHexDigit) else {
                        throw JSONProblem("a “\\u” escape needs four hexadecimal digits", at: position)
                    }
                    position += 6
                default:
                    throw JSONProblem("an invalid escape in a string", at: position)
                }
            } else if byte < 0x20 {
                throw JSONProblem("a control character in a string (it must be escaped)", at: position)
            } else {
                position += 1
            }
        }
        throw JSONProblem("a string that never ends", at: quote)
    }

    /// The characters of a string token, escapes decoded.
    func string(_ token: StringToken) throws(JSONProblem) -> String {
        guard token.hasEscapes else { return String(decoding: bytes[token.range], as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var index = token.range.lowerBound
        var pendingHighSurrogate: (value: UInt32, at: Int)?
        while index < token.range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                // Copy a run of plain UTF-8 (valid, checked up front).
                var end = index + 1
                while end < token.range.upperBound, bytes[end] != UInt8(ascii: "\\") { end += 1 }
                if let pending = pendingHighSurrogate { throw Self.loneSurrogate(at: pending.at) }
                scalars.append(contentsOf: String(decoding: bytes[index..<end], as: UTF8.self).unicodeScalars)
                index = end
                continue
            }
            let escape = bytes[index + 1]
            if escape == UInt8(ascii: "u") {
                let value = bytes[(index + 2)..<(index + 6)].reduce(UInt32(0)) { $0 << 4 | Self.hexValue($1) }
                if let pending = pendingHighSurrogate {
                    guard (0xDC00...0xDFFF).contains(value) else { throw Self.loneSurrogate(at: pending.at) }
                    let combined = 0x10000 + ((pending.value - 0xD800) << 10) + (value - 0xDC00)
                    scalars.append(Unicode.Scalar(combined)!)
                    pendingHighSurrogate = nil
                } else if (0xD800...0xDBFF).contains(value) {
                    pendingHighSurrogate = (value, index)
                } else if let scalar = Unicode.Scalar(value) {
                    scalars.append(scalar)
                } else {
                    throw Self.loneSurrogate(at: index)
                }
                index += 6
                continue
            }
            if let pending = pendingHighSurrogate { throw Self.loneSurrogate(at: pending.at) }
            switch escape {
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            default: scalars.append(Unicode.Scalar(escape))  // " \ /
            }
            index += 2
        }
        if let pending = pendingHighSurrogate { throw Self.loneSurrogate(at: pending.at) }
        return String(scalars)
    }

    private static func loneSurrogate(at offset: Int) -> JSONProblem {
        JSONProblem("a “\\u” escape that is half of a surrogate pair", at: offset)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt32 {
        switch byte {
        case 0x30...0x39: UInt32(byte - 0x30)
        case 0x41...0x46: UInt32(byte - 0x41 + 10)
        default: UInt32(byte - 0x61 + 10)
        }
    }

    /// Reads a number token (the reader must be at its first character).
    mutating func scanNumber() throws(JSONProblem) -> NumberToken {
        let start = position
        func digits() -> Int {
            let first = position
            while let byte = peek(), (0x30...0x39).contains(byte) { position += 1 }
            return position - first
        }
        if peek() == UInt8(ascii: "-") { position += 1 }
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else if digits() == 0 {
            throw JSONProblem("an invalid number", at: start)
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw JSONProblem("a number with no digits after its decimal point", at: start) }
            isInteger = false
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw JSONProblem("a number with no digits in its exponent", at: start) }
            isInteger = false
        }
        return NumberToken(range: start..<position, isInteger: isInteger)
    }

    /// Reads `true`, `false` or `null`.
    private mutating func scanLiteral() throws(JSONProblem) {
        for literal in ["true", "false", "null"] where bytes[position...].starts(with: literal.utf8) {
            position += literal.utf8.count
            return
        }
        throw JSONProblem("an invalid value", at: position)
    }

    /// The text of a token or value.
    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    // MARK: Skipping

    /// Reads one whole value of any kind, checking its syntax, and returns the range of its text.
    mutating func skipValue() throws(JSONProblem) -> Range<Int> {
        skipWhitespace()
        let start = position
        let base = open.count
        while true {
            // A value starts here.
            skipWhitespace()
            guard let byte = peek() else { throw JSONProblem("the text ends where a value should be", at: position) }
            switch byte {
            case UInt8(ascii: "{"):
                try openObject()
                if try nextKey() != nil { continue }
            case UInt8(ascii: "["):
                try openArray()
                if try nextElement() { continue }
            case UInt8(ascii: "\""):
                _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                _ = try scanNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                try scanLiteral()
            default:
                throw JSONProblem("an invalid value", at: position)
            }
            // The value ended: close containers until one has another member.
            var hasNext = false
            while open.count > base, !hasNext {
                hasNext = open[open.count - 1].isObject ? try nextKey() != nil : try nextElement()
            }
            if !hasNext { return start..<position }
        }
    }
}
