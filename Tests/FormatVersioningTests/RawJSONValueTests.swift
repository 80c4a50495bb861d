import DocumentKitSystem
import Foundation
import FormatVersioning
import Testing

@Suite struct RawJSONValueTests {
    struct Tag: Codable, Equatable {
        var name: String
        var color: String
    }

    @Test("values made from Swift values read back as those values")
    func accessors() throws {
        #expect(RawJSONValue(string: "a \"b\"").stringValue == "a \"b\"")
        #expect(RawJSONValue(string: "x").jsonText == "\"x\"")
        #expect(RawJSONValue(integer: -42).integerValue == -42)
        #expect(RawJSONValue(bool: false).boolValue == false)
        #expect(RawJSONValue.null.isNull)
        #expect(RawJSONValue(integer: 1).stringValue == nil)
        #expect(RawJSONValue(string: "1").integerValue == nil)
        #expect(try RawJSONValue(jsonText: "1.5").integerValue == nil)
        #expect(try RawJSONValue(jsonText: "99999999999999999999").integerValue == nil)
    }

    @Test("Codable values go in with sorted keys and come back out")
    func codable() throws {
        let value = try RawJSONValue(encoding: [Tag(name: "travel", color: "#0a0/1")])
        #expect(value.jsonText == ##"[{"color":"#0a0/1","name":"travel"}]"##)
        #expect(try value.decode([Tag].self) == [Tag(name: "travel", color: "#0a0/1")])
        let error = #expect(throws: DocumentKitError.self) { try RawJSONValue(string: "x").decode(Int.self) }
        #expect(error?.code == .corruptData)
    }

    @Test("JSON text is checked: one value, valid syntax, bounded depth; surrounding space dropped")
    func checkedText() throws {
        #expect(try RawJSONValue(jsonText: "  [1, {\"a\": null}]\n").jsonText == "[1, {\"a\": null}]")
        for bad in ["", "[1,]", "{\"a\" 1}", "tru", "1 2", "\"unterminated", "01", "-", "1.", "1e", "[" + String(repeating: "[", count: 70) + String(repeating: "]", count: 71)] {
            let error = #expect(throws: DocumentKitError.self, "\(bad)") { try RawJSONValue(jsonText: bad) }
            #expect(error?.code == .invalidArgument)
        }
    }
}
