import DocumentKit
import Foundation

extension LibraryWatcher {
    /// The feed without the index's live updates: when the library can't be watched (no inotify
    /// instance left, `fs.inotify.max_user_instances`), the index looks at the library every
    /// `interval` instead. Slower, but the events and the heartbeats go on, and the server says
    /// so at once instead of failing at shutdown.
    func poll(_ index: DocumentIndex, after error: any Error, every interval: Duration = .seconds(1)) async {
        warn("warning: the library can't be watched (\(error)); the event feed looks at it every \(interval) instead")
        for entry in await index.entries where NotesLibrary.isNote(entry) {
            if let id = Self.identifier(entry) { await api.events.assume(id: id, etag: api.tag(at: entry.url)?.description) }
        }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            guard !Task.isCancelled, let batch = try? await index.refresh() else { continue }
            await publish(batch)
        }
    }
}
