/// The `fields` column of the persisted index: a JSON object of field name → the field's JSON
/// text as a string (`{"tags":"[\"a\"]","title":"\"Plan\""}`), read and written by hand, not with
/// a `JSONDecoder` per row.
enum StoredFields {
    /// The record's fields text (``EntryRecord/fieldsText``) of a stored object; "" for anything else.
    static func fieldsText(ofJSON json: String) -> String {
        compactFieldsText(ofJSON: json) ?? generalFieldsText(ofJSON: json)
    }

    /// ``fieldsText(ofJSON:)`` of any JSON object.
    static func generalFieldsText(ofJSON json: String) -> String {
        var bytes = Array(json.utf8)[...]
        var pairs: [(String, String)] = []
        func skipSpace() { while let byte = bytes.first, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { bytes.removeFirst() } }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard bytes.first == byte else { return false }
            bytes.removeFirst()
            return true
        }
        guard expect(0x7B) else { return "" }  // {
        if expect(0x7D) { return "" }  // }
        repeat {
            skipSpace()
            guard let name = string(&bytes), expect(0x3A), (skipSpace(), true).1, let text = string(&bytes) else { return "" }
            // A NUL can't be in a field's name or JSON text; one that claims to be is not kept.
            if !name.utf8.contains(0), !text.utf8.contains(0) { pairs.append((name, text)) }
        } while expect(0x2C)  // ,
        guard expect(0x7D), (skipSpace(), bytes.isEmpty).1 else { return "" }
        return pairs.sorted { $0.0 < $1.0 }.map { $0.0 + "\u{0}" + $0.1 }.joined(separator: "\u{0}")
    }

    /// The fields text of an object as ``json(ofFieldsText:)`` writes it — no white space, ASCII
    /// names in increasing order, the escapes it writes, no `\u` escape — in one pass and one
    /// allocation (every row a new process loads goes through here); nil for any other form,
    /// which the general reader takes.
    static func compactFieldsText(ofJSON json: String) -> String? {
        var json = json
        return json.withUTF8 { bytes -> String? in
            guard bytes.count >= 2, bytes[0] == 0x7B, bytes[bytes.count - 1] == 0x7D else { return nil }
            if bytes.count == 2 { return "" }
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            var index = 1
            var previousName: Range<Int>?
            var first = true
            // Reads the string starting at `index` (a quote) into `output`; nil if not of the compact form.
            func string(ascii: Bool) -> Range<Int>? {
                guard index < bytes.count, bytes[index] == 0x22 else { return nil }
                index += 1
                let start = output.count
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    switch byte {
                    case 0x22: return start..<output.count
                    case 0x5C:
                        guard index < bytes.count else { return nil }
                        let escape = bytes[index]
                        index += 1
                        guard let unescaped = unescaped(escape) else { return nil }
                        output.append(unescaped)
                    case 0..<0x20: return nil
                    default:
                        if ascii && byte >= 0x80 { return nil }
                        output.append(byte)
                    }
                }
                return nil
            }
            while true {
                if !first { output.append(0) }
                first = false
                guard let name = string(ascii: true), index < bytes.count, bytes[index] == 0x3A else { return nil }
                // In increasing order (the general reader sorts); a NUL in a name or text is the general reader's too.
                if let previous = previousName, !output[previous].lexicographicallyPrecedes(output[name]) { return nil }
                previousName = name
                index += 1
                output.append(0)
                guard let text = string(ascii: false), !output[name].contains(0), !output[text].contains(0) else { return nil }
                guard index < bytes.count else { return nil }
                let separator = bytes[index]
                index += 1
                if separator == 0x7D { return index == bytes.count ? String(validating: output, as: UTF8.self) : nil }
                guard separator == 0x2C else { return nil }
            }
        }
    }

    /// The stored object of a record's fields text.
    static func json(ofFieldsText text: String) -> String {
        guard !text.isEmpty else { return "{}" }
        let parts = text.split(separator: "\u{0}", omittingEmptySubsequences: false)
        var output: [UInt8] = [0x7B]
        var index = 0
        while index + 1 < parts.count {
            if index > 0 { output.append(0x2C) }
            append(parts[index], to: &output)
            output.append(0x3A)
            append(parts[index + 1], to: &output)
            index += 2
        }
        output.append(0x7D)
        return String(decoding: output, as: UTF8.self)
    }

    private static func append(_ text: Substring, to output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: output += [0x5C, 0x22]
            case 0x5C: output += [0x5C, 0x5C]
            case 0x0A: output += [0x5C, 0x6E]
            case 0x0D: output += [0x5C, 0x72]
            case 0x09: output += [0x5C, 0x74]
            case 0..<0x20: output += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: output.append(byte)
            }
        }
        output.append(0x22)
    }

    /// The byte a one-letter JSON escape (`\n`, `\"`, …) stands for; nil for `\u` and anything else.
    private static func unescaped(_ escape: UInt8) -> UInt8? {
        switch escape {
        case 0x22, 0x5C, 0x2F: escape
        case 0x62: 0x08
        case 0x66: 0x0C
        case 0x6E: 0x0A
        case 0x72: 0x0D
        case 0x74: 0x09
        default: nil
        }
    }

    /// Reads a JSON string at the start of `bytes`, unescaping it; nil if there is none.
    private static func string(_ bytes: inout ArraySlice<UInt8>) -> String? {
        guard bytes.first == 0x22 else { return nil }
        bytes.removeFirst()
        var output: [UInt8] = []
        var pendingHigh: UInt32?
        while let byte = bytes.popFirst() {
            switch byte {
            case 0x22:
                guard pendingHigh == nil else { return nil }
                return String(validating: output, as: UTF8.self)
            case 0x5C:
                guard let escape = bytes.popFirst() else { return nil }
                if escape == 0x75 {  // \uXXXX
                    guard bytes.count >= 4, let unit = UInt32(String(decoding: bytes.prefix(4), as: UTF8.self), radix: 16) else { return nil }
                    bytes.removeFirst(4)
                    var scalarValue = unit
                    if let high = pendingHigh {
                        guard (0xDC00...0xDFFF).contains(unit) else { return nil }
                        scalarValue = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
                        pendingHigh = nil
                    } else if (0xD800...0xDBFF).contains(unit) {
                        pendingHigh = unit
                        continue
                    }
                    guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                    output += Array(String(Character(scalar)).utf8)
                    continue
                }
                guard pendingHigh == nil, let unescaped = unescaped(escape) else { return nil }
                output.append(unescaped)
            default:
                guard pendingHigh == nil, byte >= 0x20 else { return nil }
                output.append(byte)
            }
        }
        return nil
    }
}
