/// Reads a manifest's JSON text strictly: known fields must have their types and bounds, unknown
/// ones are checked as JSON and kept as text.
struct ManifestReader {
    private var scanner: JSONScanner
    private typealias Limits = DocumentManifest.Limits

    init(_ bytes: [UInt8]) {
        scanner = JSONScanner(bytes, maximumDepth: Limits.maximumDepth)
    }

    mutating func read() throws(JSONProblem) -> DocumentManifest {
        try scanner.validateEncoding()
        guard scanner.nextKind() == .object else {
            throw JSONProblem("the manifest must be a JSON object, not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        try scanner.openObject()
        var format: String?
        var version: Int?
        var minimumReader: Int?
        var minimumWriter: Int?
        var required: Set<String> = []
        var optional: Set<String> = []
        var writer: DocumentManifest.Writer?
        var identifier: String?
        var members: [String: MemberRecord]?
        var migrations: [String] = []
        var additional: [String: RawJSONValue] = [:]
        var seen = Set<String>()
        while let token = try scanner.nextKey() {
            let key = try scanner.string(token)
            guard seen.insert(key).inserted else {
                throw JSONProblem("the field “\(excerpt(key))” appears twice", at: token.range.lowerBound - 1)
            }
            switch key {
            case "format": format = try string(key, rule: ManifestRules.formatIdentifierProblem)
            case "formatVersion": version = try versionNumber(key)
            case "minReaderVersion": minimumReader = try versionNumber(key)
            case "minWriterVersion": minimumWriter = try versionNumber(key)
            case "requiredFeatures": required = Set(try names(key, maximumCount: Limits.maximumFeatures))
            case "optionalFeatures": optional = Set(try names(key, maximumCount: Limits.maximumFeatures))
            case "writer": writer = try self.writer()
            case "documentIdentifier": identifier = try string(key, rule: ManifestRules.nameProblem)
            case "members": members = try self.members()
            case "appliedMigrations": migrations = try names(key, maximumCount: Limits.maximumMigrations)
            default:
                if let problem = ManifestRules.additionalKeyProblem(key) {
                    throw JSONProblem("the field name “\(excerpt(key))” \(problem)", at: token.range.lowerBound - 1)
                }
                guard additional.count < Limits.maximumAdditionalFields else {
                    throw JSONProblem(
                        "more than \(Limits.maximumAdditionalFields) fields the manifest does not define",
                        at: token.range.lowerBound - 1)
                }
                additional[key] = try raw()
            }
        }
        guard scanner.isAtEnd() else { throw JSONProblem("there is text after the manifest's object", at: scanner.position) }
        guard let format else { throw Self.missing("format") }
        guard let version else { throw Self.missing("formatVersion") }
        guard let writer else { throw Self.missing("writer") }
        guard let identifier else { throw Self.missing("documentIdentifier") }
        let manifest = DocumentManifest(
            formatIdentifier: format, formatVersion: version, minimumReaderVersion: minimumReader,
            minimumWriterVersion: minimumWriter, requiredFeatures: required, optionalFeatures: optional, writer: writer,
            documentIdentifier: identifier, members: members, appliedMigrations: migrations, additionalFields: additional)
        if let problem = manifest.relationsProblem { throw JSONProblem(problem) }
        return manifest
    }

    private static func missing(_ key: String) -> JSONProblem {
        JSONProblem("the manifest has no “\(key)” field")
    }

    // MARK: Values

    private mutating func raw() throws(JSONProblem) -> RawJSONValue {
        RawJSONValue(checkedText: scanner.text(try scanner.skipValue()))
    }

    private mutating func string(_ field: String, rule: (String) -> String?) throws(JSONProblem) -> String {
        let offset = scanner.position
        guard scanner.nextKind() == .string else {
            throw JSONProblem("“\(field)” must be a string, not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        let value = try scanner.string(try scanner.scanString())
        if let problem = rule(value) { throw JSONProblem("“\(field)” \(problem)", at: offset) }
        return value
    }

    private mutating func integer(_ field: String, in range: ClosedRange<Int64>) throws(JSONProblem) -> Int64 {
        let offset = scanner.position
        let expected = "an integer from \(range.lowerBound) to \(range.upperBound)"
        guard scanner.nextKind() == .number else {
            throw JSONProblem("“\(field)” must be \(expected), not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        let token = try scanner.scanNumber()
        let text = scanner.text(token.range)
        guard token.isInteger, let value = Int64(text), range.contains(value) else {
            throw JSONProblem("“\(field)” must be \(expected), not \(excerpt(text))", at: offset)
        }
        return value
    }

    private mutating func versionNumber(_ field: String) throws(JSONProblem) -> Int {
        Int(try integer(field, in: 1...Int64(Limits.maximumVersion)))
    }

    /// An array of distinct names (features, migration identifiers), in order.
    private mutating func names(_ field: String, maximumCount: Int) throws(JSONProblem) -> [String] {
        guard scanner.nextKind() == .array else {
            throw JSONProblem("“\(field)” must be an array of strings, not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        try scanner.openArray()
        var names: [String] = []
        var seen = Set<String>()
        while try scanner.nextElement() {
            let offset = scanner.position
            guard names.count < maximumCount else { throw JSONProblem("“\(field)” has more than \(maximumCount) entries", at: offset) }
            let name = try string("\(field)[\(names.count)]", rule: ManifestRules.nameProblem)
            guard seen.insert(name).inserted else {
                throw JSONProblem("“\(field)” lists “\(excerpt(name))” twice", at: offset)
            }
            names.append(name)
        }
        return names
    }

    private mutating func writer() throws(JSONProblem) -> DocumentManifest.Writer {
        var name: String?
        var version: String?
        let (start, additional) = try object("writer", with: ["name", "version"]) { reader, key throws(JSONProblem) in
            let value = try reader.string("writer.\(key)", rule: ManifestRules.nameProblem)
            if key == "name" { name = value } else { version = value }
        }
        guard let name, let version else { throw JSONProblem("“writer” must have a “name” and a “version”", at: start) }
        return DocumentManifest.Writer(name: name, version: version, additionalFields: additional)
    }

    /// Reads an object whose fields `known` are read by `readKnown`, keeping every other field as
    /// text; returns where the object starts and the other fields.
    private mutating func object(
        _ label: String, with known: [String], readKnown: (inout ManifestReader, String) throws(JSONProblem) -> Void
    ) throws(JSONProblem) -> (start: Int, additional: [String: RawJSONValue]) {
        guard scanner.nextKind() == .object else {
            let fields = known.map { "“\($0)”" }.joined(separator: " and ")
            throw JSONProblem(
                "“\(label)” must be an object with \(fields), not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        let start = scanner.position
        try scanner.openObject()
        var additional: [String: RawJSONValue] = [:]
        var seen = Set<String>()
        while let token = try scanner.nextKey() {
            let key = try scanner.string(token)
            guard seen.insert(key).inserted, additional.count < Limits.maximumAdditionalFields,
                key.utf8.count <= Limits.maximumKeyLength
            else {
                throw JSONProblem(
                    "“\(label)” has a duplicate, overlong or extra field “\(excerpt(key))”", at: token.range.lowerBound - 1)
            }
            if known.contains(key) { try readKnown(&self, key) } else { additional[key] = try raw() }
        }
        return (start, additional)
    }

    private mutating func members() throws(JSONProblem) -> [String: MemberRecord] {
        guard scanner.nextKind() == .object else {
            throw JSONProblem(
                "“members” must be an object of member paths, not \(scanner.nextKind().rawValue)", at: scanner.position)
        }
        try scanner.openObject()
        var members: [String: MemberRecord] = [:]
        while let token = try scanner.nextKey() {
            let offset = token.range.lowerBound - 1
            let path = try scanner.string(token)
            if let problem = ManifestRules.memberPathProblem(path) {
                throw JSONProblem("the member path “\(excerpt(path))” \(problem)", at: offset)
            }
            guard members.count < Limits.maximumMembers else {
                throw JSONProblem("“members” lists more than \(Limits.maximumMembers) members", at: offset)
            }
            let record = try record(path)
            guard members.updateValue(record, forKey: path) == nil else {
                throw JSONProblem("the member “\(excerpt(path))” is listed twice", at: offset)
            }
        }
        return members
    }

    /// A member's record: `{"size": N, "sha256": "…"}` read directly (the common case, thousands
    /// of times in a large package), anything else (other fields, escapes, a problem to report)
    /// by the general reader from the same place.
    private mutating func record(_ path: String) throws(JSONProblem) -> MemberRecord {
        let saved = scanner
        if let record = try? plainRecord() { return record }
        scanner = saved
        return try generalRecord(path)
    }

    /// A record with exactly the fields `size` (a non-negative integer) and `sha256` (64 lower-case
    /// hexadecimal digits), keys without escapes; nil for anything else.
    private mutating func plainRecord() throws(JSONProblem) -> MemberRecord? {
        guard scanner.nextKind() == .object else { return nil }
        try scanner.openObject()
        var size: Int64?
        var digest: String?
        while let token = try scanner.nextKey() {
            guard !token.hasEscapes else { return nil }
            if size == nil, scanner.bytes[token.range].elementsEqual("size".utf8) {
                guard scanner.nextKind() == .number else { return nil }
                let number = try scanner.scanNumber()
                guard number.isInteger, let value = Self.nonNegativeInteger(scanner.bytes[number.range]) else { return nil }
                size = value
            } else if digest == nil, scanner.bytes[token.range].elementsEqual("sha256".utf8) {
                guard scanner.nextKind() == .string else { return nil }
                let string = try scanner.scanString()
                let bytes = scanner.bytes[string.range]
                guard !string.hasEscapes, bytes.count == 64, bytes.allSatisfy(ManifestRules.isLowerHexDigit) else { return nil }
                digest = String(decoding: bytes, as: UTF8.self)
            } else {
                return nil
            }
        }
        guard let size, let digest else { return nil }
        return MemberRecord(size: size, sha256: digest)
    }

    /// The value of up to 18 decimal digits without a sign or leading zero (`0` itself allowed).
    private static func nonNegativeInteger(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18, digits.first != UInt8(ascii: "-"),
            digits.count == 1 || digits.first != UInt8(ascii: "0")
        else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - 0x30)
        }
        return value
    }

    private mutating func generalRecord(_ path: String) throws(JSONProblem) -> MemberRecord {
        let label = "members[\"\(excerpt(path))\"]"
        var size: Int64?
        var digest: String?
        let (start, additional) = try object(label, with: ["size", "sha256"]) { reader, key throws(JSONProblem) in
            if key == "size" {
                size = try reader.integer("\(label).size", in: 0...Int64.max)
            } else {
                digest = try reader.string("\(label).sha256", rule: ManifestRules.digestProblem)
            }
        }
        guard let size, let digest else { throw JSONProblem("“\(label)” must have a “size” and a “sha256”", at: start) }
        return MemberRecord(size: size, sha256: digest, additionalFields: additional)
    }
}
