// A child process for the index tests: writes note-like packages into a library and tells its
// persisted index after each (`DocumentIndex.noteChanges(at:)`).
//
//     dk-index-child LIBRARY CACHE PREFIX COUNT   writes COUNT notes PREFIX0.note..., then exits
//     dk-index-child LIBRARY CACHE PREFIX loop    writes notes until killed
//
// After each note it prints its number on standard output.
import DocumentKit
import Foundation

@main
struct IndexChild {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 5 else {
            FileHandle.standardError.write(Data("usage: dk-index-child LIBRARY CACHE PREFIX COUNT|loop\n".utf8))
            exit(64)
        }
        let library = URL(fileURLWithPath: arguments[1], isDirectory: true)
        let configuration = DocumentIndex.Configuration(
            folderURL: library, packageExtensions: ["note"], manifestName: "Info.json", formatIdentifier: "org.documentkit.test.note",
            readerVersion: 1, keyField: "title", fields: ["title", "tags"], cacheFolder: URL(fileURLWithPath: arguments[2], isDirectory: true))
        let prefix = arguments[3]
        let count = Int(arguments[4]) ?? Int.max
        let index = try DocumentIndex(configuration)
        var n = 0
        while n < count {
            let name = "\(prefix)\(n).note"
            try writeNote(name, title: "\(prefix) \(n)", in: library)
            await index.noteChanges(at: [name])
            FileHandle.standardOutput.write(Data("\(n)\n".utf8))
            n += 1
        }
        for notice in await index.notices { FileHandle.standardError.write(Data((notice + "\n").utf8)) }
    }

    static func writeNote(_ name: String, title: String, in library: URL) throws {
        let package = library.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let body = Data("text".utf8)
        try body.write(to: package.appendingPathComponent("body.txt"))
        let manifest = DocumentManifest(
            formatIdentifier: "org.documentkit.test.note", formatVersion: 1, writer: .init(name: "dk-index-child", version: "1"),
            members: ["body.txt": MemberRecord(size: Int64(body.count), sha256: String(repeating: "0", count: 64))],
            additionalFields: ["title": RawJSONValue(string: title), "tags": try RawJSONValue(jsonText: "[\"a\"]")])
        try manifest.jsonData().write(to: package.appendingPathComponent("Info.json"))
    }
}
