import DocumentArchive
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// The zip tree of single-file documents: written in one pass, read lazily, unchanged members
/// copied compressed.
@Suite struct SingleFileArchiveTests {
    static func tree() -> FileWrapper {
        FileWrapper(directoryWithFileWrappers: [
            "Info.json": FileWrapper(regularFileWithContents: Data("{\"title\":\"x\"}".utf8)),
            "body.md": FileWrapper(regularFileWithContents: Data(String(repeating: "All work and no play. ", count: 5_000).utf8)),
            "media": FileWrapper(directoryWithFileWrappers: [
                "random.bin": FileWrapper(regularFileWithContents: Data((0..<100_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })),
                "empty": FileWrapper(regularFileWithContents: Data()),
            ]),
            "link": FileWrapper(symbolicLinkWithDestination: "media/random.bin"),
        ])
    }

    /// Every regular file's bytes and every link's target, by path.
    static func contents(_ tree: FileWrapper, prefix: String = "") throws -> [String: Data] {
        var result: [String: Data] = [:]
        for (name, child) in tree.fileWrappers ?? [:] {
            switch child.kind {
            case .directory: result.merge(try contents(child, prefix: prefix + name + "/")) { a, _ in a }
            case .symbolicLink: result[prefix + name] = Data(("-> " + (child.symbolicLinkDestination ?? "")).utf8)
            case .regularFile: result[prefix + name] = try child.regularFileContents
            }
        }
        return result
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func anArchivedTreeReadsBackWholeAndPassesUnzip() throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("Doc.zdoc")
        let tree = Self.tree()
        _ = try SingleFileArchive.archive(tree, path: url.path).write(to: url)
        let check = try Self.run("unzip", ["-t", url.path])
        #expect(check.status == 0, "\(check.output)")
        let read = try SingleFileArchive.expand(try FileWrapper(contentsOf: url), at: url)
        #expect(try Self.contents(read) == Self.contents(tree))
        #expect(read["media"]?.isDirectory == true)
        // The same tree gives the same bytes.
        let again = folder.appending("Again.zdoc")
        _ = try SingleFileArchive.archive(tree, path: again.path).write(to: again)
        #expect(try Data(contentsOf: url) == Data(contentsOf: again))
    }

    @Test func unchangedMembersAreCopiedCompressedAndTheChangedOneIsNew() throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("Doc.zdoc")
        _ = try SingleFileArchive.archive(Self.tree(), path: url.path).write(to: url)
        var read = try SingleFileArchive.expand(try FileWrapper(contentsOf: url), at: url)
        read["body.md"] = FileWrapper(regularFileWithContents: Data("short now".utf8))
        // Saved over the file it was read from: the members still read from the old archive.
        _ = try SingleFileArchive.archive(read, path: url.path).write(to: url)
        let reread = try SingleFileArchive.expand(try FileWrapper(contentsOf: url), at: url)
        // A member is read lazily: it is not loaded until asked for.
        #expect(reread["media"]?["random.bin"]?.providedContents?.loaded == nil)
        var expected = try Self.contents(Self.tree())
        expected["body.md"] = Data("short now".utf8)
        #expect(try Self.contents(reread) == expected)
        #expect(try Self.run("unzip", ["-t", url.path]).status == 0)
    }

    @Test func aDamagedMemberIsReportedWhenRead() throws {
        let folder = try TemporaryDirectory()
        let url = folder.appending("Doc.zdoc")
        _ = try SingleFileArchive.archive(Self.tree(), path: url.path).write(to: url)
        var bytes = try Data(contentsOf: url)
        // Flip a byte in the middle of the data of the first file member (Info.json is short:
        // flip inside body.md's compressed bytes, found after its name).
        let name = Data("body.md".utf8)
        let at = try #require(bytes.range(of: name)).upperBound + 40
        bytes[at] ^= 0x55
        try bytes.write(to: url)
        let read = try SingleFileArchive.expand(try FileWrapper(contentsOf: url), at: url)
        #expect(throws: DocumentKitError.self) { _ = try read["body.md"]?.regularFileContents }
        #expect(try read["media"]?["random.bin"]?.regularFileContents.count == 100_000)
    }
}
