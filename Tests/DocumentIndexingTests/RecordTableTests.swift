@testable import DocumentIndexing
import DocumentKitTesting
import Foundation
import Testing

/// The index's table of records (an open-addressing table of positions): against a dictionary,
/// under random inserts, replacements and removals.
@Suite("Record table")
struct RecordTableTests {
    static func record(_ path: String, _ version: Int) -> EntryRecord {
        let stamp = FileStamp(device: 1, inode: UInt64(version), size: 0, modificationTime: 0, changeTime: 0)
        return EntryRecord(
            libraryURL: URL(fileURLWithPath: "/library"), relativePath: path, identifier: nil, formatIdentifier: nil,
            formatVersion: nil, key: nil, fieldsText: "", state: .current, package: stamp, manifest: nil, conflicts: nil)
    }

    @Test("a removal, and only a removal, gives the table a removal generation no table had")
    func removalGenerations() {
        var table = RecordTable()
        let other = RecordTable()
        #expect(table.removalGeneration != other.removalGeneration)
        let start = table.removalGeneration
        table.insertIfAbsent(Self.record("a.note", 1))
        table["a.note"] = Self.record("a.note", 2)
        table.insertIfAbsent(Self.record("b.note", 1))
        #expect(table.removalGeneration == start, "adding and replacing remove nothing")
        #expect(table.contains("a.note") && !table.contains("c.note"))
        let copy = table
        table.removeValue(forKey: "c.note")
        #expect(table.removalGeneration == start, "nothing was there to remove")
        table["a.note"] = nil
        #expect(table.removalGeneration != start)
        #expect(table.removalGeneration != other.removalGeneration)
        #expect(copy.removalGeneration == start, "a copy keeps the generation it was taken at")
    }

    @Test("inserts, replacements and removals in random order leave the table equal to a dictionary", arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var generator = SeededRandom(seed: seed)
        var table = RecordTable()
        var model: [String: EntryRecord] = [:]
        // Few distinct paths, many operations: long probe runs, and removals inside them.
        let paths = (0..<300).map { "folder-\($0 % 7)/note-\($0).note" }
        for step in 0..<20_000 {
            let path = paths[Int.random(in: 0..<paths.count, using: &generator)]
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                #expect(table.removeValue(forKey: path)?.package == model.removeValue(forKey: path)?.package)
            case 1:
                table.insertIfAbsent(Self.record(path, step))
                if model[path] == nil { model[path] = Self.record(path, step) }
            default:
                table[path] = Self.record(path, step)
                model[path] = Self.record(path, step)
            }
            if step % 997 == 0 || step == 19_999 {
                #expect(table.count == model.count)
                for path in paths { #expect(table[path]?.package == model[path]?.package, "\(path) at step \(step)") }
                #expect(Set(table.keys) == Set(model.keys))
            }
        }
        let built = RecordTable(model.values.map { $0 } + [Self.record(paths[0], 1_000_000)])
        #expect(built.count == model.count + (model[paths[0]] == nil ? 1 : 0))
    }

    @Test("a record keeps its key and fields text in one string, whatever they hold")
    func keyAndFields() {
        for key in [nil, "", "-", "12:", "Trip", "Bench note 000123", "ü:ß\u{0}\u{1}", "👩‍👩‍👧 plans"] as [String?] {
            for fields in ["", "title\u{0}\"x\"", "a\u{0}1\u{0}b\u{0}[\"-\",\"3:\"]"] {
                var record = Self.record("a.note", 1)
                record.key = key
                record.fieldsText = fields
                #expect(record.key == key && record.fieldsText == fields, "\(String(describing: key)) \(fields)")
                record.key = "Other"
                #expect(record.fieldsText == fields)
            }
        }
    }
}
