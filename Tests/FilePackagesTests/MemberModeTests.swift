import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Issue #12 §4: members narrowed to 0600 or 0444 came back 0644 after a save that wrote them anew.
@Suite struct MemberModeTests {
    static func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int) ?? -1
    }

    @Test("a member written anew keeps the mode its predecessor had", arguments: [0o600, 0o444, 0o640])
    func rewrittenMemberKeepsItsMode(mode: Int) throws {
        let directory = try TemporaryDirectory(prefix: "member-modes")
        let package = directory.appending("Doc.pkg")
        try FileWrapper(directoryWithFileWrappers: [
            "body.txt": FileWrapper(regularFileWithContents: Data("one".utf8)),
            "secret": FileWrapper(directoryWithFileWrappers: ["key.txt": FileWrapper(regularFileWithContents: Data("k".utf8))]),
        ]).write(to: package)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: package.appendingPathComponent("body.txt").path)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: package.appendingPathComponent("secret").path)
        var tree = try FileWrapper(contentsOf: package)
        tree["body.txt"] = FileWrapper(regularFileWithContents: Data("two".utf8))  // a new wrapper: no mode of its own
        tree["secret"] = FileWrapper(directoryWithFileWrappers: ["key.txt": FileWrapper(regularFileWithContents: Data("k2".utf8))])
        _ = try tree.write(to: package)
        #expect(try Self.mode(package.appendingPathComponent("body.txt")) == mode)
        #expect(try Self.mode(package.appendingPathComponent("secret")) == 0o700)
        #expect(String(decoding: try Data(contentsOf: package.appendingPathComponent("body.txt")), as: UTF8.self) == "two")
    }

    @Test("a mode the app asks for wins over the predecessor's")
    func requestedModeWins() throws {
        let directory = try TemporaryDirectory(prefix: "member-modes")
        let package = directory.appending("Doc.pkg")
        try FileWrapper(directoryWithFileWrappers: ["a.txt": FileWrapper(regularFileWithContents: Data("one".utf8))]).write(to: package)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: package.appendingPathComponent("a.txt").path)
        var tree = try FileWrapper(contentsOf: package)
        tree["a.txt"] = FileWrapper(regularFileWithContents: Data("two".utf8), permissions: 0o644)
        _ = try tree.write(to: package)
        #expect(try Self.mode(package.appendingPathComponent("a.txt")) == 0o644)
    }
}
