#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitSystem
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

@testable import FilePackages

/// Makes `levels` folders named `name`, each inside the previous, in the folder at `url`, and a
/// file in the deepest. Each level is made relative to the one before: the whole path is longer
/// than `PATH_MAX`.
func makeNestedFolders(_ levels: Int, named name: String = "nested-folder", in url: URL) throws {
    var fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try #require(fd >= 0)
    for level in 0..<levels {
        try #require(mkdirat(fd, name, 0o755) == 0, "mkdirat at level \(level): errno \(errno)")
        let next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        close(fd)
        try #require(next >= 0, "openat at level \(level): errno \(errno)")
        fd = next
    }
    let file = openat(fd, "deepest.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
    close(fd)
    try #require(file >= 0)
    _ = "the bottom".withCString { write(file, $0, strlen($0)) }
    close(file)
}

/// Packages nested far deeper than any document: reading refuses them with an error naming the
/// package (no walk recurses per level), and they can still be removed.
@Suite struct DeepTreeTests {
    @Test func aPackageNestedAThousandLevelsDeepFailsToReadWithAnErrorNamingIt() throws {
        let directory = try fastTemporaryDirectory()
        let url = directory.appending("Deep.pkg")
        _ = try folder(["body.md": file("the body")]).write(to: url)
        try makeNestedFolders(1_000, in: url)
        let error = try #require(failure { () throws(DocumentKitError) in _ = try FileWrapper(contentsOf: url) })
        #expect(error.code == .corruptData)
        #expect(error.path == url.path)
        #expect(error.description.contains("nested deeper than \(FileWrapper.maximumDepth) levels"))
        #expect(error.originalIsIntact == true)
        #expect(try removeTree(url))
    }

    @Test func aPackageNestedExactlyToTheLimitReadsSavesAndIsRemoved() throws {
        let directory = try fastTemporaryDirectory()
        let url = directory.appending("Deep.pkg")
        _ = try folder(["body.md": file("the body")]).write(to: url)
        try makeNestedFolders(FileWrapper.maximumDepth, named: "d", in: url)
        var tree = try FileWrapper(contentsOf: url)
        let deepest = Array(repeating: "d", count: FileWrapper.maximumDepth).joined(separator: "/") + "/deepest.txt"
        #expect(try tree.fileWrapper(atPath: deepest)?.regularFileContents == Data("the bottom".utf8))
        tree["body.md"] = file("changed")
        _ = try tree.write(to: url)
        let reread = try FileWrapper(contentsOf: url)
        #expect(try reread.fileWrapper(atPath: deepest)?.regularFileContents == Data("the bottom".utf8))
        #expect(try reread["body.md"]?.regularFileContents == Data("changed".utf8))
        try FileItem.remove(at: url)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(litter(in: directory.url).isEmpty)
    }

    @Test func savingATreeNestedDeeperThanTheLimitFailsAndLeavesNothing() throws {
        let directory = try fastTemporaryDirectory()
        let url = directory.appending("Deep.pkg")
        var tree = file("the bottom")
        for _ in 0...(FileWrapper.maximumDepth + 1) { tree = folder(["d": tree]) }  // the package and 257 folders
        let error = try #require(failure { () throws(DocumentKitError) in _ = try tree.write(to: url) })
        #expect(error.code == .invalidArgument)
        #expect(error.description.contains("nested deeper than \(FileWrapper.maximumDepth) levels"))
        #expect(try directory.contents().isEmpty)
    }

    @Test func removingAPackageNestedFiveThousandLevelsDeepNeedsNoStackPerLevel() throws {
        let directory = try fastTemporaryDirectory()
        let url = directory.appending("Deep.pkg")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try makeNestedFolders(5_000, named: "d", in: url)
        // On a thread with a small stack (256 KiB): a removal that recursed per level would overflow it.
        let result = onThread(stackSize: 256 * 1024) { () -> DocumentKitError? in
            do throws(DocumentKitError) { try FileItem.remove(at: url) } catch { return error }
            return nil
        }
        #expect(result == nil)
        #expect(try directory.contents().isEmpty)
    }

    @Test func recoveryRemovesALeftoverTreeNestedAThousandLevelsDeep() throws {
        let directory = try fastTemporaryDirectory()
        let leftover = directory.appending(TemporaryName.prefix(for: "Deep.pkg") + "old-0123456789ab")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: false)
        try makeNestedFolders(1_000, in: leftover)
        let fd = open(directory.url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        let report = try InterruptedSaveRecovery(fileSystem: .live).run(in: fd, path: directory.url.path)
        #expect(report.removed == [leftover.lastPathComponent])
        #expect(try directory.contents().isEmpty)
    }

    /// Runs `body` on a new thread with a stack of `stackSize` bytes and returns its result.
    private func onThread<T: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> T) -> T {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let value = body()
            box.withLock { $0 = value }
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        return box.withLock { $0! }
    }

    /// The error `body` throws (nil if it succeeds: no dump of a deep tree in the failure).
    private func failure(_ body: () throws(DocumentKitError) -> Void) -> DocumentKitError? {
        do { try body() } catch { return error }
        return nil
    }

    /// Removes the tree at `url` through DocumentKit (Foundation can't: its paths exceed PATH_MAX).
    private func removeTree(_ url: URL) throws -> Bool {
        try FileItem.remove(at: url)
        return !FileManager.default.fileExists(atPath: url.path)
    }
}
