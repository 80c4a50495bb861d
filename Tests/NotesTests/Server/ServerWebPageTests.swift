import DocumentKitTesting
import Foundation
import Testing

/// Issue #16: the web page at `/`, in a real headless Chromium (Debian's `chromium`, which
/// Scripts/bootstrap.sh installs) over a `notes serve` process, with the `notes` command
/// changing the library meanwhile. Screenshots go to `.build/test-artefacts/`.
@Suite("notes serve: the web page in headless Chromium", .serialized)
struct ServerWebPageTests {
    /// A library with a server over it and the page open in Chromium.
    struct Session {
        let folder: TemporaryDirectory
        let notes: NotesRunner
        let server: NotesServerProcess
        let page: ChromiumPage

        /// The id of the note titled `title`, from the API's listing.
        func id(of title: String) async throws -> String {
            let listing = try await server.get("/api/notes?limit=1000").json as? [[String: Any]] ?? []
            return try #require(listing.first { $0["title"] as? String == title }?["id"] as? String, "no note titled \(title)")
        }

        /// The note as the API gives it now.
        func note(_ id: String) async throws -> NotesServerProcess.Reply { try await server.get("/api/notes/\(id)") }

        /// Opens the note by a click on its title in the list, and waits until the editor has it.
        func open(_ title: String) async throws -> String {
            let id = try await id(of: title)
            try await page.click(".note-link[data-note-id=\(js(id))]")
            let etag = try #require(try await note(id).etag)
            try await page.wait("document.getElementById('editor').dataset.etag === \(js(etag)) && !document.getElementById('editor').hidden")
            return id
        }

        /// `Other/trip.note`'s body and manifest copied into the library's `trip.note` as a
        /// Syncthing's conflict copies of them.
        static func plantConflictCopies(in notes: NotesRunner, from other: NotesRunner, stamp: String) throws {
            let package = notes.library.appendingPathComponent("trip.note")
            for member in ["body", "Info"] {
                try FileManager.default.copyItem(
                    at: other.library.appendingPathComponent("trip.note/\(member).json"),
                    to: package.appendingPathComponent("\(member).sync-conflict-\(stamp)-ABCDEFG.json"))
            }
        }

        func text(_ id: String) async throws -> String? { try await page.evaluate("document.getElementById(\(js(id))).textContent") }
        func value(_ id: String) async throws -> String? { try await page.evaluate("document.getElementById(\(js(id))).value") }
        func isShown(_ id: String) async throws -> Bool? {
            try await page.evaluate("!document.getElementById(\(js(id))).closest('[hidden]')", as: Bool.self)
        }
    }

    /// A JavaScript string literal for `text`.
    static func js(_ text: String) -> String { String(decoding: try! JSONEncoder().encode(text), as: UTF8.self) }

    /// `.build/test-artefacts/NAME` in the repository (git-ignored).
    static func artefact(_ name: String) throws -> URL {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let folder = repository.appendingPathComponent(".build/test-artefacts", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name)
    }

    /// Runs `body` with the page open over a new library that `setup` filled; checks that the
    /// page logged no error (a script error, a blocked resource, a CSP violation).
    func withPage(
        _ setup: (NotesRunner, TemporaryDirectory) throws -> Void = { _, _ in }, expectedHTTPErrors: [Int] = [],
        _ body: (Session) async throws -> Void
    ) async throws {
        let folder = try TemporaryDirectory(prefix: "notes-web-page")
        let notes = NotesRunner(library: folder.appending("Library"))
        try notes.ok(["init"])
        try setup(notes, folder)
        let server = try await NotesServerProcess.start(library: notes.library)
        let page: ChromiumPage
        do { page = try await ChromiumPage.launch(in: folder.url) } catch {
            try await server.terminate()
            throw error
        }
        do {
            try await page.navigate(server.baseURL + "/")
            try await page.wait("document.body.dataset.live === 'open' && document.body.dataset.listed !== undefined")
            try await body(Session(folder: folder, notes: notes, server: server, page: page))
            let problems = try await page.console().filter { entry in
                guard entry.kind == "exception" || entry.kind.hasSuffix("error") else { return false }
                // fetch() logs every 4xx it gets; only the ones the scenario makes are expected.
                return !(entry.source == "network" && expectedHTTPErrors.contains { entry.text.contains("status of \($0)") })
            }
            #expect(problems.isEmpty, "the page logged errors: \(problems)")
        } catch {
            try await page.close()
            try await server.terminate()
            throw error
        }
        try await page.close()
        #expect(try await server.terminate() == 0)
    }

    @Test("GET / is the page: HTML, not cached without a check, with a CSP that allows only its own style and script")
    func pageHeaders() async throws {
        let folder = try TemporaryDirectory(prefix: "notes-web-page")
        let notes = NotesRunner(library: folder.appending("Library"))
        try notes.ok(["init"])
        let server = try await NotesServerProcess.start(library: notes.library)
        let reply = try await server.get("/")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "text/html; charset=utf-8")
        #expect(reply.header("Cache-Control") == "no-cache")
        let policy = try #require(reply.header("Content-Security-Policy"))
        #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-") && policy.contains("connect-src 'self'"))
        #expect(!policy.contains("unsafe"))
        #expect(reply.text.contains("<textarea id=\"note-body\""))
        #expect(!reply.text.contains("src=\"http") && !reply.text.contains("href=\"http"), "the page loads nothing from elsewhere")
        #expect(try await server.terminate() == 0)
    }

    @Test("the page lists every note with its text escaped, and a click opens one in the editor (screenshot kept)")
    func listsNotesAndOpensOne() async throws {
        let hostile = "<img src=x onerror=\"document.title='pwned'\">"
        try await withPage({ notes, _ in
            try notes.ok(["new", "Groceries", "--body", "milk\neggs\n", "--tag", "home", "--tag", "weekly"])
            try notes.ok(["new", hostile, "--body", "<b>not bold</b> & <script>document.title='pwned'</script>"])
            try notes.ok(["new", "Trip", "--body", "pack\n"])
        }) { s in
            try await s.page.wait("document.querySelectorAll('#notes li').length === 3")
            let titles = try await s.page.evaluate("[...document.querySelectorAll('#notes .note-link')].map(b => b.textContent)", as: [String].self)
            #expect(titles == [hostile, "Groceries", "Trip"])
            let id = try await s.open("Groceries")
            let note = try await s.note(id)
            #expect(try await s.value("note-body") == note.object["body"] as? String && note.object["body"] as? String == "milk\neggs\n")
            #expect(try await s.text("note-title") == "Groceries")
            #expect(try await s.value("note-tags") == "home, weekly")
            #expect(try await s.text("save-state") == "Saved")
            #expect(try await s.page.evaluate("document.querySelector('.note-link[aria-current=\"true\"]').textContent") == "Groceries")
            try await s.page.screenshot(to: try Self.artefact("notes-serve-page.png"))
            print("notes serve web page screenshot: \(try Self.artefact("notes-serve-page.png").path)")

            _ = try await s.open(hostile)
            #expect(try await s.text("note-title") == hostile)
            #expect(try await s.value("note-body") == "<b>not bold</b> & <script>document.title='pwned'</script>")
            let injected = "document.querySelectorAll('img, b, main script, nav script').length"
            #expect(try await s.page.evaluate(injected, as: Int.self) == 0, "note text became markup")
            #expect(try await s.page.evaluate("document.title") == "Notes")
        }
    }

    @Test("a CLI edit of the open note shows up in its editor within seconds, and a CLI-made note in the list, without a reload")
    func cliEditAppearsLive() async throws {
        try await withPage({ notes, _ in try notes.ok(["new", "Groceries", "--body", "milk\n"]) }) { s in
            let id = try await s.open("Groceries")
            _ = try await s.page.evaluate("window.notReloaded = true; 'marked'")
            let started = ContinuousClock.now
            try s.notes.ok(["edit", "Groceries", "--append", "bread from the CLI"])
            try await s.page.wait("document.getElementById('note-body').value.includes('bread from the CLI')", timeout: 8)
            print("a CLI edit reached the open page in \(ContinuousClock.now - started)")
            #expect(try await s.value("note-body") == s.note(id).object["body"] as? String)
            #expect(try await s.page.evaluate("document.getElementById('editor').dataset.etag") == s.note(id).etag)
            #expect(try await s.text("save-state") == "Updated from elsewhere")
            #expect(try await s.isShown("changed-notice") == false)

            try s.notes.ok(["new", "Later", "--body", "made by the CLI"])
            try await s.page.wait("[...document.querySelectorAll('#notes .note-link')].some(b => b.textContent === 'Later')", timeout: 5)
            #expect(try await s.page.evaluate("window.notReloaded === true", as: Bool.self) == true, "the page was reloaded")
        }
    }

    @Test("saving after a CLI edit shows the conflict with both texts and loses neither; then overwrite with mine saves with the new ETag")
    func saveAfterCLIEditShowsConflict() async throws {
        try await withPage({ notes, _ in try notes.ok(["new", "Groceries", "--body", "milk\neggs\n"]) }, expectedHTTPErrors: [412]) { s in
            let id = try await s.open("Groceries")
            try await s.page.type("butter from the page", into: "#note-body")
            let mine = "milk\neggs\nbutter from the page"
            #expect(try await s.page.evaluate("document.getElementById('editor').dataset.dirty") == "true")
            try s.notes.ok(["edit", "Groceries", "--append", "bread from the CLI"])
            let theirs = try #require(try await s.note(id).object["body"] as? String)
            #expect(theirs.contains("bread from the CLI"))
            // The page hears of it, and keeps the user's text.
            try await s.page.wait("!document.getElementById('changed-notice').hidden", timeout: 5)
            #expect(try await s.text("changed-text")?.contains("changed elsewhere") == true)
            #expect(try await s.value("note-body") == mine)

            try await s.page.click("#save")
            try await s.page.wait("document.getElementById('conflict').dataset.state === 'open'")
            #expect(try await s.text("conflict-heading") == "This note was changed elsewhere")
            #expect(try await s.text("conflict-message")?.contains("Your changes are not saved yet") == true)
            #expect(try await s.value("note-body") == mine, "the editor keeps the user's text")
            #expect(try await s.text("conflict-mine") == mine)
            #expect(try await s.text("conflict-theirs") == theirs)
            // Nothing was overwritten: the note still has the CLI's text.
            #expect(try await s.note(id).object["body"] as? String == theirs)
            #expect(try s.notes.ok(["show", "Groceries"]).contains("bread from the CLI"))
            try await s.page.screenshot(to: try Self.artefact("notes-serve-conflict.png"))

            // Loading the current version keeps the user's text in view.
            try await s.page.click("#conflict-load-theirs")
            try await s.page.wait("document.getElementById('conflict').dataset.state === 'loaded'")
            #expect(try await s.value("note-body") == theirs)
            #expect(try await s.text("conflict-mine") == mine)

            try await s.page.click("#conflict-overwrite")
            try await s.page.wait("document.getElementById('conflict').hidden")
            let saved = try await s.note(id)
            #expect(saved.object["body"] as? String == mine)
            #expect(try await s.value("note-body") == mine)
            #expect(try await s.page.evaluate("document.getElementById('editor').dataset.etag") == saved.etag)
            #expect(try await s.text("save-state") == "Saved")
            // The CLI's text is still there, as the version the overwrite replaced.
            let versions = try await s.server.get("/api/notes/\(id)/versions").json as? [[String: Any]] ?? []
            var bodies: [String] = []
            for case let url as String in versions.map({ $0["url"] }) {
                if let body = try await s.server.get(url).object["body"] as? String { bodies.append(body) }
            }
            #expect(bodies.contains(theirs), "the CLI's text is kept as a version: \(bodies)")
        }
    }

    @Test("a note with a sync engine's conflict version shows it, and Merge from the page settles it keeping both changes")
    func resolvesAConflictByMerging() async throws {
        try await withPage({ notes, folder in
            try notes.ok(["new", "Trip", "--body", "one\ntwo\nthree\n"])
            let other = NotesRunner(library: folder.appending("Other"))
            try other.ok(["init"])
            try FileManager.default.copyItem(at: notes.library.appendingPathComponent("trip.note"), to: other.library.appendingPathComponent("trip.note"))
            try notes.ok(["edit", "Trip", "--set", "ONE\ntwo\nthree\n"])
            try other.ok(["edit", "Trip", "--set", "one\ntwo\nTHREE\n"])
            try Session.plantConflictCopies(in: notes, from: other, stamp: "20261122-101500")
        }) { s in
            try await s.page.wait("document.querySelector('#notes .badge[data-conflicts=\"1\"]') !== null")
            let id = try await s.open("Trip")
            try await s.page.wait("!document.getElementById('conflicts').hidden && document.querySelectorAll('#conflict-versions li').length === 1")
            try await s.page.click("#conflict-versions li .show-version")
            try await s.page.wait("document.querySelector('#conflict-versions li pre').textContent.includes('THREE')")

            try await s.page.click("#resolve-merge")
            try await s.page.wait("document.getElementById('conflicts').hidden && document.getElementById('message').textContent === 'The conflict is settled.'")
            let note = try await s.note(id)
            let body = try #require(note.object["body"] as? String)
            #expect(body.contains("ONE") && body.contains("THREE") && body.contains("two"))
            #expect(note.object["conflicts"] as? Int == 0)
            #expect(try await s.value("note-body") == body)
            try await s.page.wait("document.querySelector('#notes .badge') === null", timeout: 5)
        }
    }
}
