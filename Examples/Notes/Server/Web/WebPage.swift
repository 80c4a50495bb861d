import Foundation

/// The web page at `/`: one self-contained document (inline style and script, nothing fetched
/// but the API) to list, read, edit and create notes and settle conflicts, live from
/// `/api/events`.
///
/// Every save sends `If-Match` with the `ETag` the page loaded; a 412 shows the user's unsaved
/// text and the note's current text side by side, and nothing is thrown away without a click.
/// Note text only ever reaches the page through `textContent` and `value`. The response's
/// Content-Security-Policy allows exactly this style and this script (by their SHA-256).
enum WebPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Notes</title>
        <link rel="icon" href="data:,">
        <style>\#(style)</style>
        </head>
        <body data-live="connecting">
        <header>
          <h1>Notes</h1>
          <span id="live" role="status">Connecting…</span>
        </header>
        <div id="layout">
          <nav aria-label="Notes">
            <form id="new-note" autocomplete="off">
              <input id="new-title" aria-label="Title of a new note" placeholder="New note title" maxlength="1000" required>
              <button id="create-note" type="submit">Create</button>
            </form>
            <ul id="notes"></ul>
            <p id="empty-list" class="quiet" hidden>No notes yet: create one above.</p>
          </nav>
          <main>
            <p id="message" role="status" hidden></p>
            <p id="placeholder" class="quiet">Choose a note on the left, or create one.</p>
            <section id="editor" aria-labelledby="note-title" hidden>
              <h2 id="note-title"></h2>
              <p id="note-meta" class="quiet"></p>
              <div id="changed-notice" class="notice" role="alert" hidden>
                <span id="changed-text"></span>
                <button id="compare-now" type="button">Compare with the current version</button>
              </div>
              <section id="conflict" class="conflict" role="alert" aria-labelledby="conflict-heading" hidden>
                <h3 id="conflict-heading">This note was changed elsewhere</h3>
                <p id="conflict-message"></p>
                <div class="columns">
                  <div>
                    <h4>Your text (not saved)</h4>
                    <pre id="conflict-mine" tabindex="0"></pre>
                    <p id="conflict-mine-tags" class="quiet"></p>
                  </div>
                  <div>
                    <h4>Current text, saved elsewhere</h4>
                    <pre id="conflict-theirs" tabindex="0"></pre>
                    <p id="conflict-theirs-tags" class="quiet"></p>
                  </div>
                </div>
                <div class="actions">
                  <button id="conflict-load-theirs" type="button">Load the current version</button>
                  <button id="conflict-overwrite" type="button">Overwrite with mine</button>
                  <button id="conflict-copy" type="button">Copy my text</button>
                  <button id="conflict-close" type="button">Close</button>
                </div>
              </section>
              <label for="note-body">Text</label>
              <textarea id="note-body" rows="16"></textarea>
              <label for="note-tags">Tags, separated by commas</label>
              <input id="note-tags" autocomplete="off">
              <div class="actions">
                <button id="save" type="button" title="Ctrl+S">Save</button>
                <button id="discard" type="button">Discard changes</button>
                <span id="save-state" class="quiet"></span>
              </div>
              <section id="conflicts" class="conflicts" aria-labelledby="conflicts-heading" hidden>
                <h3 id="conflicts-heading">Unresolved conflict versions</h3>
                <p id="conflicts-text"></p>
                <ul id="conflict-versions"></ul>
                <div class="actions">
                  <button id="resolve-keep-current" type="button">Keep the current note</button>
                  <button id="resolve-merge" type="button">Merge them</button>
                </div>
              </section>
            </section>
          </main>
        </div>
        <script>\#(script)</script>
        </body>
        </html>

        """#

    static let style = #"""

        :root { color-scheme: light dark; --accent: #2457a6; --warn: #9a5b00; --line: #8884; font-family: system-ui, sans-serif; }
        body { margin: 0; line-height: 1.4; }
        header { display: flex; align-items: baseline; gap: 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
        h1 { font-size: 1.3rem; margin: 0; }
        #live { font-size: .85rem; color: var(--warn); }
        body[data-live="open"] #live { color: green; }
        #layout { display: grid; grid-template-columns: minmax(12rem, 20rem) 1fr; min-height: calc(100vh - 3rem); }
        nav { border-right: 1px solid var(--line); padding: .75rem; overflow: auto; }
        main { padding: .75rem 1.25rem; min-width: 0; }
        #new-note { display: flex; gap: .25rem; margin-bottom: .75rem; }
        #new-title { flex: 1; min-width: 0; }
        #notes { list-style: none; margin: 0; padding: 0; }
        #notes li { display: flex; flex-wrap: wrap; align-items: baseline; gap: .25rem .5rem; padding: .2rem 0; }
        .note-link { all: unset; cursor: pointer; color: var(--accent); overflow-wrap: anywhere; }
        .note-link:focus-visible { outline: 2px solid var(--accent); }
        .note-link[aria-current="true"] { font-weight: 600; }
        .badge { font-size: .75rem; padding: 0 .4rem; border-radius: .6rem; background: var(--warn); color: white; }
        .tag-list { font-size: .75rem; opacity: .7; }
        .quiet { opacity: .7; font-size: .9rem; }
        h2 { margin: .25rem 0; overflow-wrap: anywhere; }
        label { display: block; margin-top: .75rem; font-weight: 600; }
        textarea, #note-tags { box-sizing: border-box; width: 100%; font: inherit; }
        textarea { font-family: ui-monospace, monospace; min-height: 12rem; resize: vertical; }
        .actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .5rem; }
        #message { padding: .4rem .6rem; border-radius: .3rem; border: 1px solid var(--line); }
        #message[data-kind="error"] { border-color: #b00020; color: #b00020; }
        .notice, .conflict, .conflicts { border: 2px solid var(--warn); border-radius: .4rem; padding: .5rem .75rem; margin: .75rem 0; }
        .conflict h3, .conflicts h3 { margin: 0 0 .25rem; color: var(--warn); }
        .columns { display: grid; grid-template-columns: 1fr 1fr; gap: .75rem; }
        .columns h4 { margin: .25rem 0; }
        pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16rem; overflow: auto; margin: 0; padding: .4rem; border: 1px solid var(--line); font-family: ui-monospace, monospace; }
        #conflict-versions { padding-left: 1.2rem; }
        #conflict-versions li { margin: .4rem 0; }
        @media (max-width: 40rem) { #layout, .columns { grid-template-columns: 1fr; } nav { border-right: 0; } }

        """#

    /// The response's `Content-Security-Policy`: nothing but this page's own style and script,
    /// and requests to this server.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src '\(hashSource(script))'; style-src '\(hashSource(style))'; connect-src 'self'; "
        + "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// `sha256-…`: a CSP hash source for an inline element whose text is `text`.
    static func hashSource(_ text: String) -> String {
        let hex = Array(NotesAPI.sha256(Data(text.utf8)).utf8)
        var bytes = Data()
        for index in stride(from: 0, to: hex.count - 1, by: 2) {
            bytes.append(UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
        }
        return "sha256-" + bytes.base64EncodedString()
    }
}
