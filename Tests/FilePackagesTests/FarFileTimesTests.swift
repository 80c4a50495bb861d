#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

/// File times outside `Int64` nanoseconds (before 1677, after 2262) are legal on ext4 and must
/// not trap: every read of a document stats its members.
@Suite struct FarFileTimesTests {
    @Test("a member stamped in the year 2300 is read and saved, its time saturated")
    func memberFromTheFuture() throws {
        let directory = try TemporaryDirectory(prefix: "far-times")
        let package = directory.appending("Doc.pkg")
        try FileWrapper(directoryWithFileWrappers: ["a.txt": FileWrapper(regularFileWithContents: Data("a".utf8))])
            .write(to: package)
        let member = package.appendingPathComponent("a.txt").path
        var times = [timespec(tv_sec: 10_413_792_000, tv_nsec: 5), timespec(tv_sec: 10_413_792_000, tv_nsec: 5)]  // 2300-01-01
        guard utimensat(AT_FDCWD, member, &times, 0) == 0 else {
            // A file system that can't hold the time has nothing to test.
            return
        }
        var tree = try FileWrapper(contentsOf: package)
        #expect(try tree["a.txt"]?.regularFileContents == Data("a".utf8))
        var info = stat()
        #expect(lstat(member, &info) == 0)
        #expect(FileStatus(info).modificationTime == .max)
        tree["b.txt"] = FileWrapper(regularFileWithContents: Data("b".utf8))
        _ = try tree.write(to: package)
        #expect(try FileWrapper(contentsOf: package)["a.txt"]?.regularFileContents == Data("a".utf8))
    }

    @Test("times are saturated, never wrapped", arguments: [Int.min, -9_300_000_000, -1, 0, 9_223_372_036, 9_300_000_000, Int.max])
    func saturation(seconds: Int) {
        let value = FileStatus.nanoseconds(timespec(tv_sec: seconds, tv_nsec: 999_999_999))
        if seconds >= 9_223_372_036 { #expect(value == .max) }
        if seconds <= -9_223_372_037 { #expect(value == .min) }
        if seconds == 0 { #expect(value == 999_999_999) }
        if seconds == -1 { #expect(value == -1) }
    }
}
