#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Synchronization
import Testing

/// "Is this still the item I read?", answered by ``ItemState`` alone (issue #12 §6).
@Suite struct ItemStateTests {
    @Test("an untouched item, and one renamed away and back (only its change time moved), is still the state read")
    func untouchedAndRenamedBack() throws {
        let library = try VersionLibrary()
        let item = library.item("a.txt")
        try Data("one".utf8).write(to: item)
        let base = try #require(ItemState.ofItem(at: item))
        #expect(base.isStill(try #require(ItemState.ofItem(at: item))))
        let aside = library.item("aside.txt")
        #expect(rename(item.path, aside.path) == 0 && rename(aside.path, item.path) == 0)
        let now = try #require(ItemState.ofItem(at: item))
        #expect(now.identity.changeTime != base.identity.changeTime || now.identity == base.identity)
        #expect(base.isStill(now))
        #expect(base.moved(to: item) != nil)
    }

    @Test("a file replaced by another is no longer the state read, unless digests say the contents are the same")
    func replacedFile() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("b.txt")
        try Data("one".utf8).write(to: item)
        let digest: (URL) -> String? = { store.contentDigest(ofItemAt: $0) }
        let base = try #require(ItemState.ofItem(at: item, digest: digest))
        try Data("one".utf8).write(to: item, options: .atomic)  // the same contents, a new file
        #expect(!base.withDigest(nil).isStill(try #require(ItemState.ofItem(at: item))))
        #expect(base.isStill(try #require(ItemState.ofItem(at: item, digest: digest))))
        try Data("two".utf8).write(to: item, options: .atomic)
        #expect(!base.isStill(try #require(ItemState.ofItem(at: item, digest: digest))))
        #expect(base.moved(to: item) == nil)
    }

    @Test("a FIFO where a package's manifest or a file item should be names no contents, at once (not waited on for a writer)")
    func fifoInsteadOfManifest() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let package = library.item("fifo.pkg")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let manifest = package.appendingPathComponent("Info.json")
        let file = library.item("fifo.txt")
        #expect(mkfifo(manifest.path, 0o600) == 0 && mkfifo(file.path, 0o600) == 0)
        let digests = Mutex<[String?]?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let found = [store.contentDigest(ofItemAt: package), store.contentDigest(ofItemAt: file)]
            digests.withLock { $0 = found }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            Issue.record("reading the digest waited for a writer of a FIFO")
            // Let the reader go: a writer that opens and closes each FIFO ends its wait.
            for fifo in [manifest, file] {
                let fd = open(fifo.path, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }
            _ = done.wait(timeout: .now() + 10)
        }
        #expect(digests.withLock { $0 } == [nil, nil])
    }

    @Test("a package member written in place changes the state of a package captured with its members")
    func memberWrittenInPlace() throws {
        let library = try VersionLibrary()
        let package = library.item("c.pkg")
        try VersionLibrary.package(["body.txt": "one"]).write(to: package)
        let base = try #require(ItemState.ofItem(at: package, includingMembers: true))
        let handle = try FileHandle(forWritingTo: package.appendingPathComponent("body.txt"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(" more".utf8))
        try handle.close()
        let now = try #require(ItemState.ofItem(at: package, includingMembers: true))
        #expect(base.identity.inode == now.identity.inode)
        #expect(!base.isStill(now))
        #expect(base.isStill(try #require(ItemState.ofItem(at: package))) == true)  // without members: the folder alone
    }

    @Test("the conflict rule: without a store a changed item refuses the save, with one it is kept as a conflict")
    func conflictRule() throws {
        let library = try VersionLibrary()
        let store = library.store()
        let item = library.item("d.txt")
        try Data("one".utf8).write(to: item)
        let base = try #require(ItemState.ofItem(at: item, digest: { store.contentDigest(ofItemAt: $0) }))
        #expect(try ItemState.keepingConflict(ofItemAt: item, since: base, in: store) == nil)
        try Data("two".utf8).write(to: item, options: .atomic)
        #expect(throws: DocumentKitError.self) { try ItemState.keepingConflict(ofItemAt: item, since: base, in: nil) }
        let conflict = try #require(try ItemState.keepingConflict(ofItemAt: item, since: base, in: store))
        #expect(conflict.isUnresolvedConflict)
        #expect(try ItemState.keepingConflict(ofItemAt: item, since: nil, in: store) == nil)
    }
}
