#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// The namespace folder and its lock file are verified on what was opened, and the lock file is
/// never opened again by name (issue #13 §1). The attacks of a second real user are in
/// Tests/NotesTests/PerUserStateTests.swift; these need no second user.
@Suite struct NamespaceFolderTests {
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory(prefix: "dk-ns-folder") }

    private func code(_ body: () throws -> Void) -> DocumentKitError.Code? {
        do { try body() } catch let error as DocumentKitError { return error.code } catch { return nil }
        return nil
    }

    @Test("A lock file renamed away and replaced while locks are held is not opened again by name")
    func replacedLockFileIsNotReopenedByName() throws {
        let fixture = try Fixture()
        try fixture.makeFile("a.txt")
        let url = fixture.url("a.txt")
        let locks = fixture.namespaceFolder.appending("locks")
        let coordinator = fixture.coordinator
        let second: Result<Void, DocumentKitError> = try coordinator.coordinate(writingItemAt: url) { _ in
            try FileManager.default.moveItem(at: locks, to: fixture.namespaceFolder.appending("locks.old"))
            #expect(FileManager.default.createFile(atPath: locks.path, contents: nil))
            // A coordination of another thread (not nested in this one) needs a description of its own.
            let result = Mutex<Result<Void, DocumentKitError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                do {
                    try coordinator.coordinate(writingItemAt: url, timeout: .milliseconds(300)) { _ in }
                    result.withLock { $0 = .success(()) }
                } catch {
                    let failure = error as? DocumentKitError ?? DocumentKitError(.other, operation: .open, path: "\(error)")
                    result.withLock { $0 = .failure(failure) }
                }
                done.signal()
            }
            done.wait()
            return result.withLock { $0! }
        }
        // Granted would mean two writers at once: the second locked the new file, not the held one.
        switch second {
        case .success: Issue.record("a second writer was granted while the first held the item")
        case .failure(let error): #expect(error.code == .busy, "\(error)")
        }
    }

    @Test("A lock file that is a symbolic link or has a second name is refused")
    func lockFileLinksAreRefused() throws {
        let elsewhere = folder.appending("elsewhere")
        #expect(FileManager.default.createFile(atPath: elsewhere.path, contents: nil))
        let linked = folder.appending("linked")
        try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: linked.appendingPathComponent("locks").path, withDestinationPath: elsewhere.path)
        #expect(code { _ = try CoordinationNamespace(directory: linked) } == .untrustedFolder)
        let hardLinked = folder.appending("hard")
        try FileManager.default.createDirectory(at: hardLinked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.linkItem(at: elsewhere, to: hardLinked.appendingPathComponent("locks"))
        #expect(code { _ = try CoordinationNamespace(directory: hardLinked) } == .untrustedFolder)
    }

    @Test("A namespace folder others may write is refused unless it is a set-group-ID folder of the user's group")
    func groupSharedFolder() throws {
        let shared = folder.appending("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        #expect(chown(shared.path, geteuid(), getegid()) == 0)
        #expect(chmod(shared.path, 0o777) == 0)
        #expect(code { _ = try CoordinationNamespace(directory: shared) } == .untrustedFolder)
        #expect(chmod(shared.path, 0o770) == 0)
        #expect(code { _ = try CoordinationNamespace(directory: shared) } == .untrustedFolder)
        #expect(chmod(shared.path, 0o2770) == 0)
        let namespace = try CoordinationNamespace(directory: shared)
        var status = stat()
        #expect(stat(shared.appendingPathComponent("locks").path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660)
        _ = namespace
    }

    @Test("A namespace folder in a folder every user may write is refused unless that folder is sticky")
    func parentMustNotLetOthersRenameIt() throws {
        let open = folder.appending("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        #expect(chmod(open.path, 0o777) == 0)
        let namespace = open.appendingPathComponent("ns")
        do {
            _ = try CoordinationNamespace(directory: namespace)
            Issue.record("a folder that every user may rename away was used")
        } catch {
            #expect(error.code == .untrustedFolder && "\(error)".contains("without the sticky bit"), "\(error)")
        }
        #expect(chmod(open.path, 0o1777) == 0)
        _ = try CoordinationNamespace(directory: namespace)
    }

    @Test("A new namespace folder is created 0700 with a lock file 0600, and the error for a refused one names it")
    func newFolderIsPrivate() throws {
        let fresh = folder.appending("a/b/ns")
        _ = try CoordinationNamespace(directory: fresh)
        var status = stat()
        #expect(stat(fresh.path, &status) == 0 && status.st_mode & 0o7777 == 0o700)
        #expect(stat(fresh.appendingPathComponent("locks").path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(chmod(fresh.path, 0o757) == 0)
        do {
            _ = try CoordinationNamespace(directory: fresh)
            Issue.record("a folder every user may write was used")
        } catch {
            #expect(error.code == .untrustedFolder)
            #expect("\(error)".contains(fresh.path) && "\(error)".contains("mode 757"), "\(error)")
        }
    }
}
