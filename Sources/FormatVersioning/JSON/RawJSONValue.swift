import DocumentKitSystem
import Foundation

/// A JSON value kept as the exact text it was read as, so that a save writes it back byte for
/// byte: a number such as `12345678901234567890.5` or `1e400` is never rounded through `Double`,
/// and an object keeps its order, spacing and escapes.
///
/// The manifest keeps every field it does not define this way: the format's own fields (a note's
/// `title`) and fields written by newer versions. Read one with ``stringValue``, ``integerValue``,
/// ``boolValue`` or ``decode(_:)``; make one with ``init(string:)``, ``init(integer:)``,
/// ``init(bool:)``, ``init(encoding:)`` or ``init(jsonText:)``.
public struct RawJSONValue: Hashable, Sendable, CustomStringConvertible {
    /// The value's JSON text, exactly as read or made.
    public let jsonText: String

    /// The deepest nesting a value may have: the manifest's own limit, less the manifest object.
    static let maximumDepth = DocumentManifest.Limits.maximumDepth - 1

    /// Wraps text already checked to be one JSON value.
    init(checkedText: String) { jsonText = checkedText }

    /// A value from JSON text, checked to be exactly one JSON value (surrounding whitespace is
    /// dropped) nested at most 63 levels deep.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `invalidArgument` saying what is wrong and where.
    public init(jsonText: String) throws(DocumentKitError) {
        let bytes = Array(jsonText.utf8)
        var scanner = JSONScanner(bytes, maximumDepth: Self.maximumDepth)
        do throws(JSONProblem) {
            let range = try scanner.skipValue()
            guard scanner.isAtEnd() else { throw JSONProblem("there is text after the value", at: scanner.position) }
            self.jsonText = scanner.text(range)
        } catch {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: "(JSON value)",
                detail: "“\(excerpt(jsonText))” is not one JSON value: \(error.located(in: bytes))")
        }
    }

    /// A JSON string.
    public init(string: String) {
        var output: [UInt8] = []
        JSONWriter.writeString(string, into: &output)
        jsonText = String(decoding: output, as: UTF8.self)
    }

    /// A JSON integer.
    public init(integer: Int) { jsonText = String(integer) }

    /// `true` or `false`.
    public init(bool: Bool) { jsonText = bool ? "true" : "false" }

    /// `null`.
    public static let null = RawJSONValue(checkedText: "null")

    /// A value encoded with `JSONEncoder` (sorted keys, slashes unescaped), for structured fields.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `invalidArgument` if the encoder fails.
    public init(encoding value: some Encodable) throws(DocumentKitError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(value) } catch {
            throw DocumentKitError(
                .invalidArgument, operation: .save, path: "(JSON value)", detail: "Encoding \(type(of: value)) failed",
                underlyingError: SendableDescription(error))
        }
        try self.init(jsonText: String(decoding: data, as: UTF8.self))
    }

    /// The string, if the value is a JSON string.
    public var stringValue: String? {
        var scanner = JSONScanner(Array(jsonText.utf8), maximumDepth: 1)
        guard scanner.nextKind() == .string, let token = try? scanner.scanString(), scanner.isAtEnd() else { return nil }
        return try? scanner.string(token)
    }

    /// The integer, if the value is a JSON number without fraction or exponent that fits in `Int`.
    public var integerValue: Int? {
        var scanner = JSONScanner(Array(jsonText.utf8), maximumDepth: 1)
        guard scanner.nextKind() == .number, let token = try? scanner.scanNumber(), token.isInteger, scanner.isAtEnd() else {
            return nil
        }
        return Int(scanner.text(token.range))
    }

    /// The Boolean, if the value is `true` or `false`.
    public var boolValue: Bool? {
        switch jsonText {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// Whether the value is `null`.
    public var isNull: Bool { jsonText == "null" }

    /// The value decoded with `JSONDecoder`.
    ///
    /// - Throws: ``/DocumentKitSystem/DocumentKitError`` with code `corruptData` and the decoder's error.
    public func decode<Value: Decodable>(_ type: Value.Type) throws(DocumentKitError) -> Value {
        do { return try JSONDecoder().decode(type, from: Data(jsonText.utf8)) } catch {
            throw DocumentKitError(
                .corruptData, operation: .read, path: "(JSON value)",
                detail: "“\(excerpt(jsonText))” is not a valid \(type)", underlyingError: SendableDescription(error))
        }
    }

    public var description: String { jsonText }
}
