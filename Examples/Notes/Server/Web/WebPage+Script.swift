extension WebPage {
    /// The page's script. Its state: the listing, the open note as last loaded (`open`: the
    /// base of the editor's text, with the `ETag` every save sends as `If-Match`), the tags of
    /// this page's own writes (their events are not news), and an open conflict.
    static let script = #"""

        'use strict';
        const $ = (id) => document.getElementById(id);
        const state = { notes: [], open: null, own: new Set(), conflict: null, listGeneration: 0, listTimer: null, listShown: null };

        function el(tag, attributes, ...children) {
          const node = document.createElement(tag);
          for (const [name, value] of Object.entries(attributes || {})) {
            if (name.startsWith('on')) node.addEventListener(name.slice(2), value); else node.setAttribute(name, value);
          }
          node.append(...children);  // strings become text nodes: never markup
          return node;
        }

        async function api(method, path, { body, ifMatch, ifNoneMatch } = {}) {
          const headers = { Accept: 'application/json' };
          if (body !== undefined) headers['Content-Type'] = 'application/json';
          if (ifMatch) headers['If-Match'] = ifMatch;
          if (ifNoneMatch) headers['If-None-Match'] = ifNoneMatch;
          let response;
          try {
            response = await fetch(path, { method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body) });
          } catch (error) {
            return { status: 0, ok: false, data: { error: { message: 'the server could not be reached (' + error.message + ')' } }, headers: new Headers() };
          }
          const text = await response.text();
          let data = null;
          try { data = text ? JSON.parse(text) : null; } catch (error) { data = null; }
          return { status: response.status, ok: response.ok, data, headers: response.headers };
        }

        const errorText = (reply) => (reply.data && reply.data.error && reply.data.error.message) || 'HTTP ' + reply.status;
        const noteURL = (id) => '/api/notes/' + encodeURIComponent(id);

        function message(text, kind = 'info') {
          const node = $('message');
          node.textContent = text;
          node.dataset.kind = kind;
          node.hidden = !text;
        }

        // The listing: every page of it, applied only if no later listing started meanwhile.
        async function loadList() {
          const generation = ++state.listGeneration;
          const notes = [];
          let path = '/api/notes?limit=1000';
          for (;;) {
            const reply = await api('GET', path);
            if (!reply.ok) { message('Could not list the notes: ' + errorText(reply), 'error'); return; }
            notes.push(...reply.data);
            const next = reply.headers.get('Next-Cursor');
            if (!next) break;
            path = '/api/notes?limit=1000&cursor=' + encodeURIComponent(next);
          }
          if (generation !== state.listGeneration) return;
          state.notes = notes;
          renderList();
        }

        function refreshList() {
          clearTimeout(state.listTimer);
          state.listTimer = setTimeout(loadList, 60);
        }

        // Rebuilt only when what it shows changed: a click landing while the list is replaced
        // (an event's listing coming back the same) would otherwise be lost.
        function renderList() {
          const shown = JSON.stringify([state.notes, state.open && state.open.id]);
          if (shown === state.listShown) return;
          state.listShown = shown;
          const items = state.notes.map((note) => {
            const link = el('button', { type: 'button', class: 'note-link', 'data-note-id': note.id, onclick: () => openNote(note.id) }, note.title);
            if (state.open && state.open.id === note.id) link.setAttribute('aria-current', 'true');
            const item = el('li', { 'data-note-id': note.id, 'data-etag': note.etag }, link);
            if (note.conflicts > 0) {
              item.append(el('span', { class: 'badge', 'data-conflicts': String(note.conflicts) }, note.conflicts + (note.conflicts === 1 ? ' conflict' : ' conflicts')));
            }
            if (note.tags.length) item.append(el('span', { class: 'tag-list' }, note.tags.join(', ')));
            return item;
          });
          $('notes').replaceChildren(...items);
          $('empty-list').hidden = state.notes.length > 0;
          document.body.dataset.listed = String(state.notes.length);
        }

        // The editor. `open` is the note as last loaded; the editor's text is dirty when it differs.
        const tagsOf = (text) => text.split(',').map((tag) => tag.trim()).filter((tag) => tag);
        const edited = () => ({ body: $('note-body').value, tags: tagsOf($('note-tags').value) });

        const sameText = (a, b) => a.body === b.body && a.tags.join('\n') === b.tags.join('\n');

        function isDirty() {
          const open = state.open;
          if (!open) return false;
          const now = edited();
          return now.body !== open.shownBody || now.tags.join('\n') !== open.tags.join('\n');
        }

        function setBase(note) {
          state.open = { id: note.id, url: note.url || noteURL(note.id), title: note.title, etag: note.etag, body: note.body,
            shownBody: state.open && state.open.id === note.id ? state.open.shownBody : note.body, tags: note.tags,
            conflicts: note.conflicts, readOnly: note.readOnly, modified: note.modified };
          $('note-title').textContent = note.title;
          $('note-meta').textContent = 'Modified ' + new Date(note.modified).toLocaleString() + (note.readOnly ? ' · read-only here (a newer format)' : '');
          $('editor').dataset.noteId = note.id;
          $('editor').dataset.etag = note.etag;
          for (const id of ['note-body', 'note-tags']) $(id).readOnly = note.readOnly;
          $('save').disabled = note.readOnly;
          renderList();
          loadConflicts();
        }

        // Loads `note` into the editor, replacing its text: only when it is clean, or on a click.
        function show(note) {
          setBase(note);
          $('note-body').value = note.body;
          state.open.shownBody = $('note-body').value;  // as the textarea keeps it (line ends)
          $('note-tags').value = note.tags.join(', ');
          $('editor').hidden = false;
          $('placeholder').hidden = true;
          notice('');
          updateState();
        }

        function updateState(text) {
          const dirty = isDirty();
          $('editor').dataset.dirty = String(dirty);
          $('discard').disabled = !dirty;
          $('save-state').textContent = text || (dirty ? 'Unsaved changes' : 'Saved');
          if (state.conflict && state.conflict.tracksEditor) {
            state.conflict.mine = edited();  // what "Overwrite with mine" sends is what the editor has
            showMine();
          }
        }

        // Whether the page holds text of the user's that isn't saved: in the editor, or in the conflict view.
        const hasUnsavedText = () => isDirty() || !!(state.conflict && !state.conflict.tracksEditor);

        function refuseToLeave() {
          if (!hasUnsavedText()) return false;
          message('“' + state.open.title + '” has unsaved text: save it, copy it or discard it first.', 'error');
          return true;
        }

        function notice(text) {
          $('changed-text').textContent = text;
          $('changed-notice').hidden = !text;
        }

        async function openNote(id) {
          if (refuseToLeave()) return;
          const reply = await api('GET', noteURL(id));
          if (!reply.ok) { message('Could not open the note: ' + errorText(reply), 'error'); return; }
          message('');
          closeConflict();
          show(reply.data);
          history.replaceState(null, '', '#/notes/' + encodeURIComponent(id));
        }

        async function save() {
          const open = state.open;
          if (!open || open.readOnly) return;
          await put(edited(), open.etag);
        }

        // PUT `mine` if the note still is `etag`; a 412 opens the conflict view (nothing is lost).
        async function put(mine, etag) {
          const open = state.open;
          updateState('Saving…');
          const reply = await api('PUT', open.url, { body: mine, ifMatch: etag });
          if (state.open !== open && (!state.open || state.open.id !== open.id)) return;
          if (reply.ok) {
            state.own.add(reply.data.etag);
            // The conflict view goes once the user's text is saved or in the editor, never while it holds the only copy.
            if (state.conflict && (state.conflict.tracksEditor || sameText(mine, state.conflict.mine))) closeConflict();
            // The editor gets the saved text if it had it, or nothing unsaved (the current version loaded
            // in a conflict); text typed meanwhile stays, unsaved.
            const hasMine = $('note-body').value === mine.body && tagsOf($('note-tags').value).join('\n') === mine.tags.join('\n');
            if (hasMine || !isDirty()) show(reply.data); else { setBase(reply.data); state.open.shownBody = reply.data.body; }
            updateState();
            message('Saved.');
            refreshList();
          } else if (reply.status === 412) {
            updateState();
            await openConflict(mine, reply.data && reply.data.error && reply.data.error.etag);
          } else if (reply.status === 404) {
            updateState('Not saved');
            notice('This note was deleted elsewhere. Your text is still here: copy it, or create a new note with it.');
          } else {
            updateState('Not saved');
            message('Not saved: ' + errorText(reply), 'error');
          }
        }

        // The conflict view: the user's unsaved text beside the note's current text.
        async function openConflict(mine, etag) {
          const open = state.open;
          const reply = await api('GET', open.url);
          if (!reply.ok) {
            message('This note was changed elsewhere, and its current version could not be read: ' + errorText(reply) + '. Your text is still in the editor.', 'error');
            return;
          }
          // While the editor holds the user's text, "mine" follows it; once it holds other text, "mine" stays as it is.
          state.conflict = { mine, theirs: reply.data, etag: reply.data.etag || etag, tracksEditor: sameText(edited(), mine) };
          notice('');
          $('conflict-heading').textContent = 'This note was changed elsewhere';
          $('conflict-message').textContent = 'This note was changed elsewhere since you opened it (another window, the notes command or a sync). '
            + 'Your changes are not saved yet; they are still in the editor and shown below beside the current text. '
            + 'Load the current version (your text stays here to copy), or overwrite it with yours.';
          showMine();
          $('conflict-theirs').textContent = reply.data.body;
          $('conflict-theirs-tags').textContent = 'Tags: ' + (reply.data.tags.join(', ') || 'none');
          $('conflict').dataset.state = 'open';
          $('conflict-load-theirs').disabled = false;
          $('conflict-close').textContent = state.conflict.tracksEditor ? 'Close' : 'Forget my text';
          $('conflict').hidden = false;
          $('conflict').scrollIntoView({ block: 'nearest' });
        }

        function showMine() {
          $('conflict-mine').textContent = state.conflict.mine.body;
          $('conflict-mine-tags').textContent = 'Tags: ' + (state.conflict.mine.tags.join(', ') || 'none');
        }

        function closeConflict() {
          state.conflict = null;
          $('conflict').hidden = true;
          $('conflict').dataset.state = 'closed';
        }

        function loadTheirs() {
          const conflict = state.conflict;
          conflict.tracksEditor = false;  // before the editor changes: the user's text stays in the view
          show(conflict.theirs);
          $('conflict-load-theirs').disabled = true;
          $('conflict').dataset.state = 'loaded';
          $('conflict-close').textContent = 'Forget my text';
          $('conflict-heading').textContent = 'Loaded the current version';
          $('conflict-message').textContent = 'The editor now has the current text. Your text is kept below: copy what you need, or overwrite with it.';
        }

        async function copyMine() {
          try {
            await navigator.clipboard.writeText(state.conflict.mine.body);
            message('Your text is on the clipboard.');
          } catch (error) {
            const range = document.createRange();
            range.selectNodeContents($('conflict-mine'));
            getSelection().removeAllRanges();
            getSelection().addRange(range);
            message('Your text is selected: copy it with Ctrl+C.');
          }
        }

        // Conflict versions (a sync engine's): list them, and resolve.
        async function loadConflicts() {
          const open = state.open;
          if (!open || !(open.conflicts > 0)) { $('conflicts').hidden = true; return; }
          const reply = await api('GET', open.url + '/conflicts');
          if (state.open !== open || !reply.ok) return;
          const items = reply.data.map((version) => {
            const text = el('pre', { hidden: '' });
            const who = [version.user, version.host].filter((part) => part).join(' on ');
            const when = version.date ? new Date(version.date).toLocaleString() : 'unknown date';
            return el('li', { 'data-version-id': version.id }, when + (who ? ' by ' + who : '') + ' ',
              el('button', { type: 'button', class: 'show-version', onclick: async () => {
                const got = await api('GET', version.url);
                text.textContent = got.ok ? got.data.body : 'Could not read it: ' + errorText(got);
                text.hidden = false;
              } }, 'Show its text'), ' ',
              el('button', { type: 'button', class: 'keep-version', onclick: () => resolve({ keep: version.id }) }, 'Keep this version'),
              text);
          });
          $('conflict-versions').replaceChildren(...items);
          $('conflicts-text').textContent = 'A sync engine kept ' + items.length + (items.length === 1 ? ' other version' : ' other versions')
            + ' of this note, changed at the same time on another device. Keep the current note, keep one of them, or merge them line by line.';
          $('conflicts').hidden = items.length === 0;
        }

        async function resolve(request) {
          const open = state.open;
          if (isDirty()) { message('Save or discard your changes before settling the conflict.', 'error'); return; }
          const reply = await api('POST', open.url + '/conflicts/resolve', { body: request, ifMatch: open.etag });
          if (reply.ok) {
            state.own.add(reply.data.etag);
            show(reply.data);
            message('The conflict is settled.');
            refreshList();
          } else if (reply.status === 412) {
            message('The note changed elsewhere meanwhile; it is shown as it is now. Look again, then settle the conflict.', 'error');
            const again = await api('GET', open.url);
            if (again.ok && !isDirty()) show(again.data);
          } else {
            message('The conflict is not settled: ' + errorText(reply), 'error');
          }
        }

        // Live updates: one EventSource for the tab.
        function connect() {
          const source = new EventSource('/api/events');
          const live = (status, text) => { document.body.dataset.live = status; $('live').textContent = text; };
          source.onopen = () => {
            // Whatever changed before the stream was there (at load, or while it was down) is listed again.
            live('open', 'Live');
            refreshList();
            if (state.open) reloadOpen();
          };
          source.onerror = () => live('connecting', 'Reconnecting…');
          for (const kind of ['created', 'changed', 'deleted']) source.addEventListener(kind, (event) => changed(kind, event));
          source.addEventListener('reset', () => { refreshList(); if (state.open) reloadOpen(); });
        }

        function changed(kind, event) {
          let data;
          try { data = JSON.parse(event.data); } catch (error) { return; }
          document.body.dataset.lastEvent = event.lastEventId;
          if (data.etag && state.own.has(data.etag)) return;  // this page's own write
          refreshList();
          const open = state.open;
          if (!open || data.id !== open.id) return;
          if (kind === 'deleted') {
            notice('This note was deleted elsewhere. Your text is still here: copy it, or create a new note with it.');
          } else if (data.etag !== open.etag) {
            reloadOpen();
          }
        }

        // The open note changed elsewhere: reload it into a clean editor, else say so.
        async function reloadOpen() {
          const open = state.open;
          const reply = await api('GET', open.url);
          if (state.open !== open) return;
          if (reply.status === 404) { notice('This note was deleted elsewhere. Your text is still here: copy it, or create a new note with it.'); return; }
          if (!reply.ok || reply.data.etag === open.etag) return;
          if (isDirty() || state.conflict) {
            $('changed-notice').dataset.etag = reply.data.etag;
            notice('This note was changed elsewhere while you were editing. Your text is kept: saving will show both versions.');
          } else {
            show(reply.data);
            updateState('Updated from elsewhere');
          }
        }

        async function discard() {
          const open = state.open;
          const reply = await api('GET', open.url);
          if (!reply.ok) { message('Could not reload the note: ' + errorText(reply), 'error'); return; }
          closeConflict();
          show(reply.data);
          message('');
        }

        async function create(event) {
          event.preventDefault();
          const title = $('new-title').value.trim();
          if (!title) return;
          if (refuseToLeave()) return;
          const reply = await api('POST', '/api/notes', { body: { title, body: '', tags: [] }, ifNoneMatch: '*' });
          if (!reply.ok) { message('Could not create the note: ' + errorText(reply), 'error'); return; }
          state.own.add(reply.data.etag);
          $('new-title').value = '';
          closeConflict();
          show(reply.data);
          message('Created “' + reply.data.title + '”.');
          history.replaceState(null, '', '#/notes/' + encodeURIComponent(reply.data.id));
          refreshList();
          $('note-body').focus();
        }

        $('new-note').addEventListener('submit', create);
        $('save').addEventListener('click', save);
        $('discard').addEventListener('click', discard);
        $('note-body').addEventListener('input', () => updateState());
        $('note-tags').addEventListener('input', () => updateState());
        $('compare-now').addEventListener('click', () => openConflict(edited(), $('changed-notice').dataset.etag));
        $('conflict-load-theirs').addEventListener('click', loadTheirs);
        $('conflict-overwrite').addEventListener('click', () => put(state.conflict.mine, state.conflict.etag));
        $('conflict-copy').addEventListener('click', copyMine);
        $('conflict-close').addEventListener('click', closeConflict);
        $('resolve-keep-current').addEventListener('click', () => resolve({ keep: 'current' }));
        $('resolve-merge').addEventListener('click', () => resolve({ merge: true }));
        document.addEventListener('keydown', (event) => {
          if ((event.ctrlKey || event.metaKey) && event.key === 's' && state.open) { event.preventDefault(); save(); }
        });
        window.addEventListener('beforeunload', (event) => { if (hasUnsavedText()) event.preventDefault(); });

        connect();
        loadList();
        const linked = /^#\/notes\/([^/]+)$/.exec(location.hash);
        if (linked) openNote(decodeURIComponent(linked[1]));

        """#
}
