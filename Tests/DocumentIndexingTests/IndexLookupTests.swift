@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Index lookups")
struct IndexLookupTests {
    @Test("an index lists every package of the tree with its manifest's identifier, format, key and fields")
    func listsTheTree() async throws {
        let library = try IndexTestLibrary()
        let a = try library.writeNote("A.note", title: "Alpha")
        let b = try library.writeNote("Work/Deep/B.note", title: "Beta")
        try FileManager.default.createDirectory(at: library.url.appendingPathComponent(".hidden.note"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: library.url.appendingPathComponent("loose.txt"))
        let index = try DocumentIndex(library.configuration())
        let entries = await index.entries
        #expect(entries.map(\.relativePath) == ["A.note", "Work/Deep/B.note"])
        #expect(entries.map(\.documentIdentifier) == [a, b])
        #expect(entries[1].key == "Beta")
        #expect(entries[1].fields["tags"]?.jsonText == "[\"a\"]")
        #expect(entries[1].formatIdentifier == IndexTestLibrary.format)
        #expect(entries[1].formatVersion == 1)
        #expect(entries[1].state == .current)
        #expect(entries[1].url.path == library.path("Work/Deep/B.note"))
    }

    @Test("lookups by key, by key ignoring case, by identifier and by path")
    func lookups() async throws {
        let library = try IndexTestLibrary()
        let a = try library.writeNote("A.note", title: "Shopping")
        try library.writeNote("B.note", title: "shopping")
        try library.writeNote("C.note", title: "Other", identifier: a)
        let index = try DocumentIndex(library.configuration())
        #expect(await index.entries(forKey: "Shopping").map(\.relativePath) == ["A.note"])
        #expect(await index.entries(forKeyIgnoringCase: "SHOPPING").map(\.relativePath) == ["A.note", "B.note"])
        #expect(await index.entries(withDocumentIdentifier: a).map(\.relativePath) == ["A.note", "C.note"])
        #expect(await index.entry(atRelativePath: "B.note")?.key == "shopping")
        #expect(await index.entry(atRelativePath: "Z.note") == nil)
        #expect(await index.entries(forKey: "Nothing").isEmpty)
    }

    @Test("states: another format is damaged, a newer reader version too new, a missing member incomplete, bad JSON damaged")
    func states() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("Other.note", title: "O", format: "org.example.other")
        try library.writeNote("New.note", title: "N", version: 3, minimumReaderVersion: 3)
        try library.writeNote("Half.note", title: "H")
        try FileManager.default.removeItem(atPath: library.path("Half.note/body.txt"))
        try library.writeNote("Bad.note", title: "B")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: library.path("Bad.note/Info.json")))
        try FileManager.default.createDirectory(atPath: library.path("Empty.note"), withIntermediateDirectories: true)
        let index = try DocumentIndex(library.configuration())
        let states = await Dictionary(uniqueKeysWithValues: index.entries.map { ($0.relativePath, $0.state) })
        guard case .damaged(let other)? = states["Other.note"] else { Issue.record("\(states)"); return }
        #expect(other.contains("org.example.other"))
        #expect(states["New.note"] == .tooNew(3))
        guard case .incomplete(let half)? = states["Half.note"] else { Issue.record("\(states)"); return }
        #expect(half.contains("0 of 1 members match"))
        guard case .damaged(let bad)? = states["Bad.note"] else { Issue.record("\(states)"); return }
        #expect(bad.contains("malformed"))
        guard case .incomplete? = states["Empty.note"] else { Issue.record("\(states)"); return }
    }
}
