import DocumentKit
import DocumentKitTesting
@testable import FileCoordination
import Foundation
import Testing

/// In a presented folder `D` (with `D/a`), by shell commands: `mkdir D/a/b`, a file created in
/// it, appended to, renamed and removed: appeared, appeared, changed, moved, deleted, once each.
func expectFileLifecycle(in fixture: Fixture) async throws {
    try fixture.makeFolder("D/a")
    let (folder, events) = try await fixture.presented("D")
    let b = folder.appendingPathComponent("a/b", isDirectory: true)
    let (f, g) = (b.appendingPathComponent("f"), b.appendingPathComponent("g"))
    let heard = try await events.heard(after: [
        ("mkdir '\(b.path)'", 1), ("echo x > '\(f.path)'", 2), ("echo y >> '\(f.path)'", 3), ("mv '\(f.path)' '\(g.path)'", 4),
        ("rm '\(g.path)'", 5),
    ])
    #expect(heard == [.subitemAppeared(b), .subitemAppeared(f), .subitemChanged(f), .subitemMoved(from: f, to: g), .subitemDeleted(g)], "\(heard)")
}

@Suite("A presented folder hears of changes at any depth, once each")
struct DeepWatchingTests {
    @Test("mkdir, echo >, echo >>, mv and rm two folders down: appeared, appeared, changed, moved, deleted")
    func changesTwoFoldersDown() async throws {
        try await expectFileLifecycle(in: try Fixture())
    }

    @Test("a folder created and filled in one go is reported whole, parents first, and then watched")
    func folderCreatedAndFilled() async throws {
        let fixture = try Fixture()
        try fixture.makeFolder("D")
        // Files written beforehand and renamed in: a look cannot catch one half written.
        try fixture.makeFile("staging/f", "1\n")
        try fixture.makeFile("staging/g", "2\n")
        let staging = fixture.url("staging").path
        let (folder, events) = try await fixture.presented("D")
        let x = folder.appendingPathComponent("x", isDirectory: true)
        let (y, f, g) = (x.appendingPathComponent("y", isDirectory: true), x.appendingPathComponent("y/f"), x.appendingPathComponent("g"))
        let heard = try await events.heard(after: [
            ("mkdir -p '\(y.path)' && mv '\(staging)/f' '\(f.path)' && mv '\(staging)/g' '\(g.path)'", 4), ("echo 3 >> '\(f.path)'", 5),
        ])
        // How the kernel's events were batched decides the order of siblings, never parent before child.
        let lineage = [x, y, f].map { PresentedItemEvent.subitemAppeared($0) }
        #expect(heard.count == 5 && Set(heard.prefix(4)) == Set(lineage + [.subitemAppeared(g)]), "\(heard)")
        let positions = lineage.compactMap { heard.firstIndex(of: $0) }
        #expect(positions.count == 3 && positions == positions.sorted(), "parents before what is in them: \(heard)")
        #expect(heard.last == .subitemChanged(f))
    }

    @Test("a folder moved in from outside is watched; moved within, its watches follow it")
    func folderMovedInThenWithin() async throws {
        let fixture = try Fixture()
        try fixture.makeFolder("D/a")
        try fixture.makeFile("outside/O/inner/file.txt")
        let (folder, events) = try await fixture.presented("D")
        let moved = folder.appendingPathComponent("O", isDirectory: true)
        let inner = moved.appendingPathComponent("inner", isDirectory: true)
        let innerMoved = folder.appendingPathComponent("a/inner", isDirectory: true)
        let heard = try await events.heard(after: [
            ("mv '\(fixture.url("outside/O").path)' '\(moved.path)'", 3), ("echo z > '\(inner.path)/new.txt'", 4),
            ("mv '\(inner.path)' '\(innerMoved.path)'", 5), ("echo more >> '\(innerMoved.path)/file.txt'", 6),
        ])
        #expect(heard == [
            .subitemAppeared(moved), .subitemAppeared(inner), .subitemAppeared(inner.appendingPathComponent("file.txt")),
            .subitemAppeared(inner.appendingPathComponent("new.txt")), .subitemMoved(from: inner, to: innerMoved),
            .subitemChanged(innerMoved.appendingPathComponent("file.txt")),
        ], "\(heard)")
    }

    @Test("a folder moved out or removed: each item in it is deleted, deepest first, once")
    func folderMovedOutAndRemoved() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("D/out/deep/one.txt")
        try fixture.makeFile("D/gone/two.txt")
        try fixture.makeFolder("elsewhere")
        let (folder, events) = try await fixture.presented("D")
        let heard = try await events.heard(after: [
            ("mv '\(folder.path)/out' '\(fixture.url("elsewhere").path)/out'", 3), ("rm -r '\(folder.path)/gone'", 5),
            // Nothing is heard of the folder moved out any more.
            ("echo x >> '\(fixture.url("elsewhere/out/deep/one.txt").path)'", 5),
        ])
        #expect(heard == [
            .subitemDeleted(folder.appendingPathComponent("out/deep/one.txt")),
            .subitemDeleted(folder.appendingPathComponent("out/deep", isDirectory: true)),
            .subitemDeleted(folder.appendingPathComponent("out", isDirectory: true)),
            .subitemDeleted(folder.appendingPathComponent("gone/two.txt")),
            .subitemDeleted(folder.appendingPathComponent("gone", isDirectory: true)),
        ], "\(heard)")
    }

    @Test("rm -rf of the presented folder: what was in it is deleted, deepest first, then the folder; made again, it is watched again")
    func presentedFolderRemovedAndMadeAgain() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("D/a/f.txt")
        try fixture.makeFile("staging/g.txt", "1\n")  // renamed in: a look cannot catch it half written
        let (folder, events) = try await fixture.presented("D")
        let g = folder.appendingPathComponent("b/g.txt")
        let heard = try await events.heard(after: [
            ("rm -rf '\(folder.path)'", 3), ("mkdir -p '\(folder.path)/b' && mv '\(fixture.url("staging/g.txt").path)' '\(g.path)'", 6),
            ("echo 2 >> '\(g.path)'", 7),
        ])
        #expect(heard == [
            .subitemDeleted(folder.appendingPathComponent("a/f.txt")), .subitemDeleted(folder.appendingPathComponent("a", isDirectory: true)),
            .deleted(folder), .changed(folder), .subitemAppeared(folder.appendingPathComponent("b", isDirectory: true)), .subitemAppeared(g),
            .subitemChanged(g),
        ], "\(heard)")
    }

    @Test("a change inside a package two folders down is one change of the package")
    func packageDeepInside() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("D/a/b/Doc.pkg/nested/body.md")
        let (folder, events) = try await fixture.presented("D")
        let heard = try await events.heard(after: [("echo more >> '\(folder.path)/a/b/Doc.pkg/nested/body.md'", 1)])
        #expect(heard == [.subitemChanged(folder.appendingPathComponent("a/b/Doc.pkg", isDirectory: true))], "\(heard)")
    }

    @Test("folders are watched only while presented: a tree's watches go with its presenter")
    func watchesGoWithThePresenter() async throws {
        let fixture = try Fixture()
        for index in 0..<20 { try fixture.makeFile("D/sub\(index)/deeper/file.txt") }
        final class Quiet: FilePresenter {
            let presentedItemURL: URL?
            init(_ url: URL) { presentedItemURL = url }
        }
        let registration = fixture.namespace.addPresenter(Quiet(fixture.url("D")))
        // The folder holding D, D itself, 20 subfolders and 20 folders below them.
        #expect(fixture.namespace.presenters.watches.folderCount == 42)
        #expect(fixture.namespace.presenters.watches.watcher != nil)
        registration.remove()
        #expect(fixture.namespace.presenters.watches.folderCount == 0)
        #expect(fixture.namespace.presenters.watches.watcher == nil, "the inotify instance is closed when nothing is presented")
    }

    @Test("a presented tree of 2,000 folders: a change deep inside arrives once, soon")
    func largeTree() async throws {
        let fixture = try Fixture()
        try fixture.makeFolder("D")
        try shell("cd '\(fixture.url("D").path)' && for i in $(seq 1 40); do for j in $(seq 1 49); do echo d$i/e$j; done; done | xargs mkdir -p")
        let (folder, events) = try await fixture.presented("D")
        #expect(fixture.namespace.presenters.watches.folderCount == 2_002)
        let start = ContinuousClock.now
        try shell("echo x > '\(folder.path)/d40/e49/new.txt'")
        _ = await events.wait(for: 1)
        let elapsed = ContinuousClock.now - start
        let heard = await events.settled()
        #expect(heard == [.subitemAppeared(folder.appendingPathComponent("d40/e49/new.txt"))], "\(heard)")
        #expect(elapsed < .milliseconds(500), "\(elapsed)")
    }
}
