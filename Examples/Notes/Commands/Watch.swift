import ArgumentParser
import DocumentKit
import Foundation
import Synchronization

/// One line of `notes watch --json`.
struct WatchLine: Encodable {
    let event: String
    let title: String?
    let path: String
    let from: String?
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a line for every change other processes make to the library or a note, until interrupted.",
        discussion: """
            Watching one note also keeps it open as a document that presents its file: its reloads \
            (`reloaded`) and conflict versions (`conflict`) get lines of their own.
            """)
    @OptionGroup var options: LibraryOptions
    @Argument(help: "Watch only this note.") var title: String?
    @Flag(help: "Print JSON lines: {event, title, path, from}.") var json = false

    func run() async throws {
        try await runReportingErrors {
            let library = try options.adoptedLibrary
            if title == nil, let index = library.index {
                try await watchIndex(index, of: library)
                return
            }
            var titles: [String: String] = [:]
            for note in try await library.listedNotes(problem: { _, _ in }) { titles[note.url.standardizedFileURL.path] = note.title }
            let watched: URL
            var document: NoteDocument?
            if let title {
                watched = try await library.find(title).url
                do throws(DocumentKitError) { document = try await library.open(watched, presenting: true) } catch { throw NotesError(error, note: title) }
            } else {
                watched = library.url
            }
            let stream = library.coordinator.namespace.events(for: watched)
            let documentLines = document.map { Self.emitEvents(of: $0, json: json) }
            FileHandle.standardError.write(Data("notes: watching \(watched.path) (Ctrl-C to stop)\n".utf8))
            for await event in stream {
                guard let line = await describe(event, titles: &titles, library: library) else { continue }
                Self.emit(line, json: json)
            }
            try? await document?.close(discardingChanges: true)
            await documentLines?.value
        }
    }

    /// Watches the whole library through its index: a line for every note added, removed,
    /// changed or moved in the index's update batches. The library folder's events only tell
    /// the index to look again (a live index needs no telling; one that isn't yet does).
    private func watchIndex(_ index: DocumentIndex, of library: NotesLibrary) async throws {
        try library.requireFolder()
        let events = library.coordinator.namespace.events(for: library.url)
        var batches = index.updates().makeAsyncIterator()
        _ = try await batches.next()  // the gathering batch: the notes as they are now
        // A save is a burst of events (the swap, the version store): the index looks again once
        // the burst is over, so that one change gives one line.
        let count = EventCount()
        let counting = Task { for await _ in events { count.add() } }
        let nudges = Task {
            var refreshed: UInt64 = 0
            var previous: UInt64 = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(60))
                let now = count.value
                if now != refreshed && now == previous {
                    refreshed = now
                    _ = try? await index.refresh()
                }
                previous = now
            }
        }
        defer {
            counting.cancel()
            nudges.cancel()
        }
        FileHandle.standardError.write(Data("notes: watching \(library.url.path) (Ctrl-C to stop)\n".utf8))
        while let batch = try await batches.next() {
            for line in Self.lines(for: batch) { Self.emit(line, json: json) }
        }
    }

    /// The lines of an index batch, in the events' words: appeared, deleted, changed, moved.
    static func lines(for batch: IndexBatch) -> [WatchLine] {
        var lines: [WatchLine] = []
        for entry in batch.removed where NotesLibrary.isNote(entry) {
            lines.append(WatchLine(event: "deleted", title: entry.key, path: entry.url.path, from: nil))
        }
        for move in batch.moved {
            switch (NotesLibrary.isNote(move.from), NotesLibrary.isNote(move.to)) {
            case (true, true): lines.append(WatchLine(event: "moved", title: move.to.key, path: move.to.url.path, from: move.from.url.path))
            case (false, true): lines.append(WatchLine(event: "appeared", title: move.to.key, path: move.to.url.path, from: nil))
            case (true, false): lines.append(WatchLine(event: "deleted", title: move.from.key, path: move.from.url.path, from: nil))
            case (false, false): break
            }
        }
        for entry in batch.added where NotesLibrary.isNote(entry) {
            lines.append(WatchLine(event: "appeared", title: entry.key, path: entry.url.path, from: nil))
        }
        for entry in batch.changed where NotesLibrary.isNote(entry) {
            lines.append(WatchLine(event: "changed", title: entry.key, path: entry.url.path, from: nil))
        }
        return lines
    }

    /// The line for an event, keeping `titles` up to date; nil for things that are not notes.
    private func describe(_ event: PresentedItemEvent, titles: inout [String: String], library: NotesLibrary) async
        -> WatchLine?
    {
        // The version store's folder is hidden, and nothing in it is a note.
        func isNote(_ url: URL) -> Bool {
            url.pathExtension == NoteFormat.packageExtension && !url.lastPathComponent.hasPrefix(".")
                && !url.pathComponents.contains(VersionStore.folderName)
        }
        func currentTitle(_ url: URL) async -> String? {
            let title = try? await library.open(url).content.title
            if let title { titles[url.standardizedFileURL.path] = title }
            return title ?? titles[url.standardizedFileURL.path]
        }
        switch event {
        case .changed(let url), .subitemChanged(let url):
            guard isNote(url) else { return nil }
            return WatchLine(event: "changed", title: await currentTitle(url), path: url.path, from: nil)
        case .subitemAppeared(let url):
            guard isNote(url) else { return nil }
            return WatchLine(event: "appeared", title: await currentTitle(url), path: url.path, from: nil)
        case .moved(let from, let to), .subitemMoved(let from, let to):
            guard isNote(from) || isNote(to) else { return nil }
            titles[from.standardizedFileURL.path] = nil
            // A note built under a hidden name and renamed into place (`notes new`) appears; one
            // renamed to a hidden name (or out of the library's view) is gone.
            if !isNote(from) { return WatchLine(event: "appeared", title: await currentTitle(to), path: to.path, from: nil) }
            if !isNote(to) { return WatchLine(event: "deleted", title: titles.removeValue(forKey: from.standardizedFileURL.path), path: from.path, from: nil) }
            return WatchLine(event: "moved", title: await currentTitle(to), path: to.path, from: from.path)
        case .deleted(let url), .subitemDeleted(let url):
            guard isNote(url) else { return nil }
            let title = titles.removeValue(forKey: url.standardizedFileURL.path)
            return WatchLine(event: "deleted", title: title, path: url.path, from: nil)
        }
    }

    /// Prints a line for each reload and conflict version of the open `document`, until it closes.
    private static func emitEvents(of document: NoteDocument, json: Bool) -> Task<Void, Never> {
        let events = document.events()
        return Task {
            for await event in events {
                let name: String
                switch event {
                case .reloaded: name = "reloaded"
                case .conflictGained: name = "conflict"
                default: continue
                }
                emit(WatchLine(event: name, title: document.content.title, path: document.fileURL.path, from: nil), json: json)
            }
        }
    }

    private static func emit(_ line: WatchLine, json: Bool) {
        let text: String
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            text = (try? String(decoding: encoder.encode(line), as: UTF8.self)) ?? "{}"
        } else {
            let name = line.title.map { "“\($0)”" } ?? "(unreadable note)"
            let file = URL(fileURLWithPath: line.path).lastPathComponent
            let from = line.from.map { URL(fileURLWithPath: $0).lastPathComponent + " -> " } ?? ""
            text = "\(line.event) \(name) (\(from)\(file))"
        }
        // Unbuffered, so that a pipe sees each line at once.
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// How many events the library folder gave: `watch` looks again when it stops growing.
private final class EventCount: Sendable {
    private let count = Mutex<UInt64>(0)
    func add() { count.withLock { $0 += 1 } }
    var value: UInt64 { count.withLock { $0 } }
}
