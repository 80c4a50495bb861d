import DocumentKitSystem

/// A JSON value to write: the manifest's own values, and values kept as their exact text.
indirect enum JSONOutput {
    case string(String)
    case integer(Int64)
    /// JSON text written as it is (checked already).
    case raw(String)
    case array([JSONOutput])
    /// Written with its keys sorted by their UTF-8 bytes.
    case object([String: JSONOutput])
    /// An object whose fields are already in the order of their keys' UTF-8 bytes.
    case sortedObject([(key: String, value: JSONOutput)])
}

/// Writes JSON the one way the manifest specification describes: keys sorted by their UTF-8
/// bytes, one member per line, two spaces of indentation per level, `"key" : value`, empty
/// containers as `{}` and `[]`, strings escaped minimally, and a newline at the end.
enum JSONWriter {
    static func write(_ value: JSONOutput) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        write(value, level: 0, into: &output)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    private static func write(_ value: JSONOutput, level: Int, into output: inout [UInt8]) {
        switch value {
        case .string(let string):
            writeString(string, into: &output)
        case .integer(let integer):
            output.append(contentsOf: String(integer).utf8)
        case .raw(let text):
            output.append(contentsOf: text.utf8)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, level: level, into: &output) { index, output in
                write(elements[index], level: level + 1, into: &output)
            }
        case .object(let members):
            write(.sortedObject(members.sorted { precedes($0.key, $1.key) }), level: level, into: &output)
        case .sortedObject(let fields):
            writeContainer(open: "{", close: "}", count: fields.count, level: level, into: &output) { index, output in
                writeString(fields[index].key, into: &output)
                output.append(contentsOf: " : ".utf8)
                write(fields[index].value, level: level + 1, into: &output)
            }
        }
    }

    /// Whether `a` comes before `b` in the order of their UTF-8 bytes (the specification's order
    /// of keys; `String`'s own `<` compares canonical equivalents, which is another order).
    static func precedes(_ a: String, _ b: String) -> Bool { UTF8Order.compare(a, b) < 0 }

    private static func writeContainer(
        open: Unicode.Scalar, close: Unicode.Scalar, count: Int, level: Int, into output: inout [UInt8],
        member: (Int, inout [UInt8]) -> Void
    ) {
        output.append(UInt8(ascii: open))
        guard count > 0 else {
            output.append(UInt8(ascii: close))
            return
        }
        for index in 0..<count {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * (level + 1)))
            member(index, &output)
            if index < count - 1 { output.append(UInt8(ascii: ",")) }
        }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        output.append(UInt8(ascii: close))
    }

    /// Writes a string in quotes: `"` and `\` escaped with a backslash, control characters as
    /// `\b \f \n \r \t` or `\u00XX`, everything else (`/` and non-ASCII included) as it is.
    static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
