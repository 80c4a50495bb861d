@testable import FileCoordination
import Foundation
import Testing

/// How what one look found becomes callbacks, without the file system.
@Suite("Subitem callbacks from what a look found")
struct TreeChangesTests {
    typealias Item = TreeChanges.Item

    static func file(_ path: String, inode: UInt64, fingerprint: Int = 0) -> Item {
        Item(path: path, child: .init(device: 1, inode: inode, isDirectory: false, fingerprint: fingerprint), isPackage: false)
    }

    static func folder(_ path: String, inode: UInt64) -> Item {
        Item(path: path, child: .init(device: 1, inode: inode, isDirectory: true, fingerprint: Int(inode)), isPackage: false)
    }

    static func url(_ path: String, folder: Bool = false) -> URL { URL(fileURLWithPath: "/root/" + path, isDirectory: folder) }

    @Test("a folder moved with what is in it is one move; a file changed or deleted inside it meanwhile is reported at its new path")
    func folderMoveCarriesItsContents() {
        var changes = TreeChanges()
        changes.gone = [Self.folder("a/b", inode: 10), Self.file("a/b/kept", inode: 11), Self.file("a/b/edited", inode: 12, fingerprint: 1),
                        Self.file("a/b/removed", inode: 13)]
        changes.appeared = [Self.folder("c/b", inode: 10), Self.file("c/b/kept", inode: 11), Self.file("c/b/edited", inode: 12, fingerprint: 2),
                            Self.file("c/b/new", inode: 14)]
        #expect(changes.notices(in: "/root", renameDestination: { _ in nil }) == [
            .subitemMoved(from: Self.url("a/b", folder: true), to: Self.url("c/b", folder: true)),
            .subitemChanged(Self.url("c/b/edited")),
            .subitemDeleted(Self.url("c/b/removed")),
            .subitemAppeared(Self.url("c/b/new")),
        ])
    }

    @Test("a file moved into a folder that appeared in the same look: the folder appears first")
    func moveIntoNewFolder() {
        var changes = TreeChanges()
        changes.gone = [Self.file("f", inode: 5)]
        changes.appeared = [Self.folder("new", inode: 6), Self.file("new/f", inode: 5)]
        #expect(changes.notices(in: "/root", renameDestination: { _ in nil }) == [
            .subitemAppeared(Self.url("new", folder: true)),
            .subitemMoved(from: Self.url("f"), to: Self.url("new/f")),
        ])
    }

    @Test("a folder replaced by another of the same name: what went is deleted (deepest first) before what came appears")
    func folderReplacedInPlace() {
        var changes = TreeChanges()
        changes.gone = [Self.folder("x", inode: 1), Self.file("x/old", inode: 2)]
        changes.appeared = [Self.folder("x", inode: 3), Self.file("x/new", inode: 4)]
        #expect(changes.notices(in: "/root", renameDestination: { _ in nil }) == [
            .subitemDeleted(Self.url("x/old")),
            .subitemDeleted(Self.url("x", folder: true)),
            .subitemAppeared(Self.url("x", folder: true)),
            .subitemAppeared(Self.url("x/new")),
        ])
    }

    @Test("a rename the watcher saw pairs a file replaced right after it was renamed")
    func renameRecordPairsReplacedFile() {
        var changes = TreeChanges()
        changes.gone = [Self.file("draft", inode: 7)]
        changes.appeared = [Self.file("final", inode: 8)]
        #expect(changes.notices(in: "/root", renameDestination: { $0 == "/root/draft" ? "/root/final" : nil }) == [
            .subitemMoved(from: Self.url("draft"), to: Self.url("final"))
        ])
        #expect(changes.notices(in: "/root", renameDestination: { _ in nil }) == [
            .subitemDeleted(Self.url("draft")), .subitemAppeared(Self.url("final")),
        ])
    }
}
