import Foundation

/// A JSON value, as decoded: numbers are doubles, `true` is never a number.
indirect enum JSONValue: Decodable, Equatable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ data: Data) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: data) }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var members: [String: JSONValue] {
        if case .object(let members) = self { return members }
        return [:]
    }

    var items: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }

    /// The JSON Schema types the value has (an integral number is both `integer` and `number`).
    var schemaTypes: Set<String> {
        switch self {
        case .null: return ["null"]
        case .bool: return ["boolean"]
        case .number(let value): return value.rounded() == value ? ["integer", "number"] : ["number"]
        case .string: return ["string"]
        case .array: return ["array"]
        case .object: return ["object"]
        }
    }
}

/// A JSON Schema check for the subset the OpenAPI document uses: `$ref` (inside the document),
/// `type` (one or a list), `properties`, `required`, `additionalProperties`, `items`, `enum`,
/// `const`, `oneOf`, `anyOf`, `pattern`, `minLength`/`maxLength`, `minimum`/`maximum`,
/// `minItems`/`maxItems` and the formats `date-time` and `uuid`. A keyword it doesn't know is a
/// problem of its own, so that a schema never passes for want of a check.
struct SchemaCheck {
    /// The document `$ref`s point into.
    let document: JSONValue

    /// Keywords that only describe.
    static let annotations: Set<String> = ["description", "examples", "title", "contentMediaType", "default"]

    /// What `$ref` names: `#/components/schemas/Note` → that object.
    func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var node: JSONValue? = document
        for part in reference.dropFirst(2).split(separator: "/") {
            node = node?[part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")]
        }
        return node
    }

    /// What is wrong with `value` against `schema` (empty: it validates); `path` names the place.
    func problems(_ value: JSONValue, _ schema: JSONValue, at path: String = "$") -> [String] {
        let keywords = schema.members
        var found: [String] = []
        for (keyword, constraint) in keywords.sorted(by: { $0.key < $1.key }) {
            if Self.annotations.contains(keyword) || keyword.hasPrefix("x-") { continue }
            if let problem = check(keyword, constraint, value, in: keywords, at: path) { found += problem }
        }
        return found
    }

    /// One keyword's problems; nil when it holds.
    private func check(
        _ keyword: String, _ constraint: JSONValue, _ value: JSONValue, in keywords: [String: JSONValue], at path: String
    ) -> [String]? {
        func fail(_ text: String) -> [String] { ["\(path): \(text)"] }
        switch keyword {
        case "$ref":
            guard let reference = constraint.string, let target = resolve(reference) else { return fail("unresolved $ref \(constraint)") }
            let inner = problems(value, target, at: path)
            return inner.isEmpty ? nil : inner
        case "type":
            let allowed = constraint.string.map { [$0] } ?? constraint.items.compactMap(\.string)
            return value.schemaTypes.isDisjoint(with: allowed) ? fail("is \(value.schemaTypes.sorted()), not \(allowed)") : nil
        case "enum":
            return constraint.items.contains(value) ? nil : fail("\(value) is not one of \(constraint.items)")
        case "const":
            return value == constraint ? nil : fail("\(value) is not \(constraint)")
        case "required":
            guard case .object(let members) = value else { return nil }
            let missing = constraint.items.compactMap(\.string).filter { members[$0] == nil }
            return missing.isEmpty ? nil : fail("misses \(missing)")
        case "properties":
            guard case .object(let members) = value else { return nil }
            let inner = constraint.members.flatMap { name, schema in members[name].map { problems($0, schema, at: "\(path).\(name)") } ?? [] }
            return inner.isEmpty ? nil : inner
        case "additionalProperties":
            guard case .object(let members) = value else { return nil }
            let declared = Set(keywords["properties"]?.members.keys.map { $0 } ?? [])
            let extra = members.filter { !declared.contains($0.key) }
            if constraint == .bool(false) { return extra.isEmpty ? nil : fail("has undocumented \(extra.keys.sorted())") }
            let inner = extra.flatMap { problems($0.value, constraint, at: "\(path).\($0.key)") }
            return inner.isEmpty ? nil : inner
        case "items":
            guard case .array(let items) = value else { return nil }
            let inner = items.enumerated().flatMap { problems($0.element, constraint, at: "\(path)[\($0.offset)]") }
            return inner.isEmpty ? nil : inner
        case "oneOf":
            let matching = constraint.items.filter { problems(value, $0, at: path).isEmpty }.count
            return matching == 1 ? nil : fail("matches \(matching) of oneOf's \(constraint.items.count) schemas, not 1")
        case "anyOf":
            return constraint.items.contains { problems(value, $0, at: path).isEmpty } ? nil : fail("matches none of anyOf")
        case "pattern":
            guard case .string(let text) = value else { return nil }
            guard let pattern = constraint.string, let expression = try? NSRegularExpression(pattern: pattern) else {
                return fail("bad pattern \(constraint)")
            }
            let range = NSRange(text.startIndex..., in: text)
            return expression.firstMatch(in: text, range: range) == nil ? fail("\(text.debugDescription) does not match \(pattern)") : nil
        case "minLength", "maxLength":
            guard case .string(let text) = value, case .number(let bound) = constraint else { return nil }
            let length = Double(text.unicodeScalars.count)
            return (keyword == "minLength" ? length >= bound : length <= bound) ? nil : fail("has \(Int(length)) characters (\(keyword) \(Int(bound)))")
        case "minItems", "maxItems":
            guard case .array(let items) = value, case .number(let bound) = constraint else { return nil }
            let count = Double(items.count)
            return (keyword == "minItems" ? count >= bound : count <= bound) ? nil : fail("has \(items.count) items (\(keyword) \(Int(bound)))")
        case "minimum", "maximum":
            guard case .number(let number) = value, case .number(let bound) = constraint else { return nil }
            return (keyword == "minimum" ? number >= bound : number <= bound) ? nil : fail("\(number) is out of \(keyword) \(bound)")
        case "format":
            guard case .string(let text) = value else { return nil }
            guard let format = constraint.string, let pattern = Self.formats[format] else { return fail("unknown format \(constraint)") }
            return text.range(of: pattern, options: .regularExpression) == nil ? fail("\(text.debugDescription) is not a \(format)") : nil
        default:
            return fail("the check doesn't know the keyword `\(keyword)`")
        }
    }

    /// The formats the document uses, as patterns.
    static let formats = [
        "date-time": #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"#,
        "uuid": #"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"#,
    ]
}
