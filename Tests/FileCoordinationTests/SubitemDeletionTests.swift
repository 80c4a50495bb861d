import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// A coordinated deletion tells the presenters of every folder (and package) enclosing the item,
/// before the item goes, and the watcher does not tell them again.
@Suite("Presenters of enclosing folders hear of a coordinated deletion first, once")
struct SubitemDeletionTests {
    /// Deletes `url` under a coordination `forDeleting`.
    private func delete(_ url: URL, with coordinator: FileCoordinator) throws {
        try coordinator.coordinate(writingItemAt: url, options: .forDeleting) { url in try FileManager.default.removeItem(at: url) }
    }

    @Test("another process's folder presenter hears of the deletion before the file goes, and once")
    func otherProcessFolderPresenter() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Notes/note.txt")
        let child = try await fixture.present(fixture.url("Notes").path)
        try delete(fixture.url("Notes/note.txt"), with: fixture.coordinator)
        #expect(!FileManager.default.fileExists(atPath: fixture.url("Notes/note.txt").path))
        #expect(await child.wait(forLine: "subitem-deletion note.txt present"), "\(child.callbacks)")
        try await Task.sleep(for: .milliseconds(500))  // the child's watcher sees the deletion too: not again
        #expect(child.callbacks == ["subitem-deletion note.txt present"], "\(child.callbacks)")
    }

    @Test("presenters of every enclosing folder hear of it, not only the item's own folder")
    func everyEnclosingFolder() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Notes/2026/deep.txt")
        let outer = try await fixture.present(fixture.url("Notes").path)
        let inner = try await fixture.present(fixture.url("Notes/2026").path)
        try delete(fixture.url("Notes/2026/deep.txt"), with: fixture.coordinator)
        #expect(await outer.wait(forLine: "subitem-deletion deep.txt present"), "\(outer.callbacks)")
        #expect(await inner.wait(forLine: "subitem-deletion deep.txt present"), "\(inner.callbacks)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(outer.callbacks == ["subitem-deletion deep.txt present"], "\(outer.callbacks)")
        #expect(inner.callbacks == ["subitem-deletion deep.txt present"], "\(inner.callbacks)")
    }

    @Test("a folder presenter in this process hears of the deletion before the file goes, and once")
    func sameProcessFolderPresenter() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Notes/note.txt")
        let (presenter, registration) = fixture.presentHere("Notes")
        defer { registration.remove() }
        try delete(fixture.url("Notes/note.txt"), with: fixture.coordinator)
        try await Task.sleep(for: .milliseconds(500))  // this process's watcher sees it too: not again
        #expect(presenter.calls == ["subitem-deletion note.txt present"])
    }

    @Test("a package's presenter hears of a member's deletion as a subitem's, not its own")
    func packageMember() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Doc.pkg/attachment.txt")
        let (presenter, registration) = fixture.presentHere("Doc.pkg")
        defer { registration.remove() }
        try delete(fixture.url("Doc.pkg/attachment.txt"), with: fixture.coordinator)
        #expect(Array(presenter.calls.prefix(3)) == ["relinquish-writer", "subitem-deletion attachment.txt present", "reacquire"])
        #expect(!presenter.calls.contains("deletion"))
    }

    @Test("a deletion that did not happen leaves the watcher free to report a later one")
    func deletionThatDidNotHappen() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Notes/note.txt")
        let (presenter, registration) = fixture.presentHere("Notes")
        defer { registration.remove() }
        try fixture.coordinator.coordinate(writingItemAt: fixture.url("Notes/note.txt"), options: .forDeleting) { _ in }
        try FileManager.default.removeItem(at: fixture.url("Notes/note.txt"))  // by a program that does not coordinate
        #expect(await presenter.calls(count: 2) == ["subitem-deletion note.txt present", "subitem-deletion note.txt gone"])
    }

    @Test("a folder presenter that does not answer in time is marked unresponsive, and the deletion goes on")
    func slowFolderPresenter() async throws {
        let fixture = try Fixture()
        try fixture.makeFile("Notes/note.txt")
        let child = try await fixture.present(fixture.url("Notes").path, "slow")
        let coordinator = FileCoordinator(namespace: fixture.namespace, presenterTimeout: .milliseconds(300))
        try delete(fixture.url("Notes/note.txt"), with: coordinator)
        #expect(!FileManager.default.fileExists(atPath: fixture.url("Notes/note.txt").path))
        #expect(try fixture.isMarkedUnresponsive(child))
    }
}
