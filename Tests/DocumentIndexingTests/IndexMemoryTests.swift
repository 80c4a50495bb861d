@testable import DocumentIndexing
import DocumentKit
import Foundation
import Testing

/// The compact form of the index's records (the bytes per entry are measured in `Benchmarks/README.md`).
@Suite("Index memory")
struct IndexMemoryTests {
    @Test("a record keeps its identifier as a UUID when it is one, in either case, and any other identifier as text")
    func identifiers() {
        let uuid = UUID()
        for text in [uuid.uuidString, uuid.uuidString.lowercased(), "not-a-uuid", "7e57a1d0-0000-4000-8000-00000000000A"] {
            #expect(CompactIdentifier(text).text == text)
        }
        #expect(CompactIdentifier(uuid.uuidString) == .upper(uuid))
        #expect(CompactIdentifier(nil).text == nil)
    }

    @Test("a record made from an entry gives the same entry back, and its inline size stays compact")
    func recordRoundTrip() throws {
        let stamp = FileStamp(device: 1, inode: 2, size: 3, modificationTime: 1_700_000_000_000_000_000, changeTime: 5)
        let entry = IndexEntry(
            libraryURL: URL(fileURLWithPath: "/library"), relativePath: "Work/Plan.note", documentIdentifier: UUID().uuidString,
            formatIdentifier: "org.documentkit.test.note", formatVersion: 2, key: "Plan",
            fields: ["title": RawJSONValue(string: "Plan"), "tags": try RawJSONValue(jsonText: "[\"a\", \"b\"]")],
            modificationDate: Date(timeIntervalSince1970: 1_700_000_000), state: .incomplete("body.txt is missing"))
        let record = EntryRecord(entry: entry, package: stamp, manifest: stamp, conflicts: nil)
        #expect(record.entry == entry)
        #expect(record.conflicts == nil && record.manifest == stamp)
        #expect(MemoryLayout<EntryRecord>.stride <= 256, "\(MemoryLayout<EntryRecord>.stride) bytes")
    }

    @Test("the stored fields read by hand are what JSONEncoder wrote, escapes and all, and are written back readable")
    func storedFields() throws {
        let fields: [String: String] = [
            "title": "\"a/b \\ \"quoted\" line\nbreak\ttab \u{1} é 🎉\"", "tags": "[\"x\",\"y\"]", "odd name/é": "null",
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let stored = String(decoding: try encoder.encode(fields), as: UTF8.self)
        let text = StoredFields.fieldsText(ofJSON: stored)
        let parts = text.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        var read: [String: String] = [:]
        for index in stride(from: 0, to: parts.count, by: 2) { read[parts[index]] = parts[index + 1] }
        #expect(read == fields)
        let written = StoredFields.json(ofFieldsText: text)
        #expect(try JSONDecoder().decode([String: String].self, from: Data(written.utf8)) == fields)
        #expect(StoredFields.fieldsText(ofJSON: "{}") == "" && StoredFields.fieldsText(ofJSON: "not json") == "")
        #expect(StoredFields.fieldsText(ofJSON: "{\"a\":\"\\ud83c\\udf89\"}") == "a\u{0}🎉")
    }

    @Test("the one-pass reader of the stored form reads what the general reader reads, and leaves it every other form")
    func compactStoredFields() throws {
        let texts = [
            "", "title\u{0}\"Plan\"", "tags\u{0}[\"a\",\"b\"]\u{0}title\u{0}\"x \\\"q\\\" \\n é 🎉\"", "\u{0}\"\"",
            "a\u{0}1\u{0}b\u{0}\t\n\r\\/",
        ]
        for text in texts {
            let stored = StoredFields.json(ofFieldsText: text)
            #expect(StoredFields.compactFieldsText(ofJSON: stored) == text, "\(stored)")
            #expect(StoredFields.generalFieldsText(ofJSON: stored) == text, "\(stored)")
        }
        // Forms another writer could leave: the general reader's (sorted, spaced, \u escapes, damaged).
        for stored in [
            "{\"b\":\"1\",\"a\":\"2\"}", "{ \"a\" : \"1\" }", "{\"a\":\"\\u00e9\"}", "{\"é\":\"1\"}", "{\"a\":\"1\"",
            "{\"a\":\"1\",\"a\":\"2\"}", "{\"a\":\"1\"}x", "{\"a\":1}", "{\"a\\u0000\":\"1\"}",
        ] {
            #expect(StoredFields.compactFieldsText(ofJSON: stored) == nil, "\(stored)")
            #expect(StoredFields.fieldsText(ofJSON: stored) == StoredFields.generalFieldsText(ofJSON: stored))
        }
        #expect(StoredFields.fieldsText(ofJSON: "{\"b\":\"1\",\"a\":\"2\"}") == "a\u{0}2\u{0}b\u{0}1")
        // A control character is written as \u00XX: the general reader's.
        let control = "a\u{0}\u{1}"
        #expect(StoredFields.compactFieldsText(ofJSON: StoredFields.json(ofFieldsText: control)) == nil)
        #expect(StoredFields.fieldsText(ofJSON: StoredFields.json(ofFieldsText: control)) == control)
    }
}
