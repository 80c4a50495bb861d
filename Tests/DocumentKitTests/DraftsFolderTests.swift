#if canImport(Glibc)
import Glibc
#endif
@testable import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

/// Where drafts go by default, and what is done with a drafts folder that others could look in
/// (issue #13 §1; the attacks of a second real user are in Tests/NotesTests/PerUserStateTests.swift).
@Suite struct DraftsFolderTests {
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory(prefix: "dk-drafts-folder") }

    @Test("The default drafts folder is in XDG_STATE_HOME, else in a home of the user's, else a per-user folder in TMPDIR")
    func defaultDraftsFolder() throws {
        let uid = geteuid()
        #expect(Document<String>.defaultDraftsPath(["XDG_STATE_HOME": "/state/", "HOME": folder.url.path]) == "/state/DocumentKit/drafts")
        #expect(Document<String>.defaultDraftsPath(["HOME": folder.url.path, "TMPDIR": "/t"]) == folder.url.path + "/.local/state/DocumentKit/drafts")
        #expect(Document<String>.defaultDraftsPath(["HOME": "/nonexistent-dk-home", "TMPDIR": "/t/"]) == "/t/DocumentKit-drafts-\(uid)")
        #expect(Document<String>.defaultDraftsPath(["HOME": "/", "XDG_STATE_HOME": "relative"]) == "/tmp/DocumentKit-drafts-\(uid)")
    }

    @Test("A drafts folder of the user's that others may list is made 0700 when it is looked at; one others may write is refused")
    func readableDraftsFolderIsClosed() throws {
        let drafts = folder.appending("drafts")
        try FileManager.default.createDirectory(at: drafts, withIntermediateDirectories: false)
        #expect(chmod(drafts.path, 0o755) == 0)
        let scan = RecoverableDraft.scan(drafts)
        #expect(scan.folderError == nil)
        var status = stat()
        #expect(stat(drafts.path, &status) == 0 && status.st_mode & 0o7777 == 0o700)
        #expect(chmod(drafts.path, 0o775) == 0)
        let refused = RecoverableDraft.scan(drafts)
        #expect(refused.folderError?.code == .untrustedFolder)
        #expect(refused.folderError?.path == drafts.path)
        #expect(stat(drafts.path, &status) == 0 && status.st_mode & 0o7777 == 0o775)  // not changed: refused
    }
}
