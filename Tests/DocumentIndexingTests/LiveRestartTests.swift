#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A persisted index started again on a library the shell changed while no index ran.
@Suite("Live index restart")
struct LiveRestartTests {
    @Test("a new index on the same cache equals a fresh scan after an in-place edit with the mtime restored, a removal and an addition")
    func restartAfterShellChanges() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("alpha.note", title: "Alpha")
        try library.writeNote("beta.note", title: "Beta")
        try library.writeNote("gamma.note", title: "Gamma")
        let configuration = library.configuration()
        let first = try DocumentIndex(configuration)
        try await first.sync()
        #expect(await first.entries.map(\.key) == ["Alpha", "Beta", "Gamma"])
        await first.close()

        // In place: the same inode and size, the modification time put back with `touch -d`;
        // only the change time tells.
        let manifest = library.path("alpha.note/Info.json")
        let folderBefore = try stamp(library.path("alpha.note"))
        let before = try stamp(manifest)
        try await Task.sleep(for: .milliseconds(20))  // a clock tick, so that the change time differs
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        try #require(text.contains("\"Alpha\""))
        let handle = try #require(FileHandle(forUpdatingAtPath: manifest))
        try handle.write(contentsOf: Data(text.replacingOccurrences(of: "\"Alpha\"", with: "\"Omega\"").utf8))
        try handle.close()
        try await shell("touch -m -d @\(before.mtime.sec).\(String(format: "%09d", before.mtime.nsec)) alpha.note/Info.json", in: library.url)
        let after = try stamp(manifest)
        try #require(after.inode == before.inode && after.size == before.size && after.mtime == before.mtime, "\(before) → \(after)")
        try #require(after.ctime != before.ctime, "the change time did not change: \(after)")
        try #require(try stamp(library.path("alpha.note")) == folderBefore, "the package folder changed")

        try await shell("rm -rf beta.note", in: library.url)
        try library.writeNote("delta.note", title: "Delta")

        let second = try DocumentIndex(configuration)
        try await second.refresh()
        let entries = await second.entries
        #expect(differences(entries, try await configuration.freshScan(), "restarted", "fresh") == [])
        #expect(entries.map(\.key) == ["Omega", "Delta", "Gamma"])
        await second.close()
    }
}

/// The fields of `stat` the index validates by.
struct StatFields: Equatable, CustomStringConvertible {
    var inode: UInt64
    var size: Int64
    var mtime: Timestamp
    var ctime: Timestamp

    struct Timestamp: Equatable {
        var sec: Int
        var nsec: Int
    }

    var description: String { "inode \(inode), size \(size), mtime \(mtime.sec).\(mtime.nsec), ctime \(ctime.sec).\(ctime.nsec)" }
}

/// `lstat` of `path`.
func stamp(_ path: String) throws -> StatFields {
    var status = stat()
    guard lstat(path, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return StatFields(
        inode: UInt64(status.st_ino), size: Int64(status.st_size),
        mtime: .init(sec: Int(status.st_mtim.tv_sec), nsec: Int(status.st_mtim.tv_nsec)),
        ctime: .init(sec: Int(status.st_ctim.tv_sec), nsec: Int(status.st_ctim.tv_nsec)))
}
