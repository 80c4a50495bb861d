#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import Foundation
import Synchronization

/// `notes edit TITLE --editor`: the note's body in `$EDITOR`, saved when the editor exits.
///
/// The note stays open as a presenting document (no autosave) while the editor runs, so that
/// nothing another process does to it is lost:
/// - another process's change reloads the document (it is clean); if the editor's file still
///   holds what the editor was given, it is rewritten with the new body;
/// - when the editor exits with a changed body, the document is updated with it and saved. If
///   the note changed on disk while the editor ran (the editor's text is not based on it), that
///   state is first kept as an unresolved conflict version (`notes conflicts`); a change that
///   arrives after the update is kept as one by the document itself (presenter or save);
/// - an editor that exits without changing the file saves nothing: the note stays as it is on disk.
struct EditorSession {
    let library: NotesLibrary
    let url: URL
    let title: String

    /// What the editor's file was last given, and whether the document reloaded meanwhile.
    private struct Shared {
        var given: String
        var finished = false
        var rewrites = 0
    }

    func run() async throws {
        let document: NoteDocument
        do throws(DocumentKitError) { document = try await library.open(url, presenting: true) } catch { throw NotesError(error, note: title) }
        do {
            try await edit(document)
        } catch {
            try? await document.close(discardingChanges: true)
            throw error
        }
    }

    private func edit(_ document: NoteDocument) async throws {
        let original = document.content.body
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notes-edit-\(UUID().uuidString)", isDirectory: true)
        let file = folder.appendingPathComponent(NotesLibrary.slug(for: document.content.title) + ".md")
        // The note's body is the user's alone while it is edited: a folder of theirs, 0700, verified.
        do {
            _ = try PrivateFolder.open(
                folder.path, creating: true, sharing: .ownerOnly, what: "the editor's folder",
                remedy: "Set TMPDIR to a folder of your own.", operation: .edit)
        } catch {
            throw NotesError(error.code == .untrustedFolder ? .readOnly : .cantCreate, "can't make the editor's folder: \(error)")
        }
        do {
            try Data(original.utf8).write(to: file)
        } catch {
            throw NotesError(.cantCreate, "can't write the editor's file \(file.path): \(error.localizedDescription)")
        }
        defer { try? FileManager.default.removeItem(at: folder) }

        let shared = Mutex(Shared(given: original))
        let events = document.events()
        let listener = Task {
            for await event in events {
                guard case .reloaded = event else { continue }
                let body = document.content.body
                shared.withLock { shared in
                    // Only while the editor's file is what it was given: the user's saved edits stay.
                    guard !shared.finished, Self.read(file) == shared.given, body != shared.given else { return }
                    guard (try? Data(body.utf8).write(to: file)) != nil else { return }
                    shared.given = body
                    shared.rewrites += 1
                }
            }
        }

        let status = try await Self.runEditor(on: file)
        let (given, rewrites) = shared.withLock { shared in
            shared.finished = true
            return (shared.given, shared.rewrites)
        }
        listener.cancel()
        guard status == 0 else {
            try? await document.close(discardingChanges: true)
            throw NotesError(.ioError, "the editor exited with status \(status): “\(title)” is left as it is on disk")
        }
        guard let edited = Self.read(file) else {
            try? await document.close(discardingChanges: true)
            throw NotesError(.ioError, "can't read the editor's file \(file.path): “\(title)” is left as it is on disk")
        }
        let name = document.content.title
        if edited == given {
            try await close(document)
            let reloaded = rewrites > 0 ? " (changed by another process while the editor was open; reloaded)" : ""
            print("“\(name)” unchanged\(reloaded).")
            return
        }
        // From here on, a change on disk makes the (dirty) document keep it as a conflict version;
        // the update checks, under the document's lock, whether it reloaded meanwhile.
        let changedMeanwhile = try document.update { note -> Bool in
            defer { note.body = edited }
            return note.body != original
        }
        // No presenting from here on: the coordinated read that keeps the version would ask the
        // (dirty) document to save first. A change on disk now is kept as a conflict by the save.
        document.presentsFile = false
        var kept = false
        if changedMeanwhile, let store = document.versionStore {
            // What the document reloaded is not what the editor's text is based on (or the user
            // may not have seen it): keep the note on disk as a conflict version before saving over it.
            do {
                try store.addVersion(ofItemAt: document.fileURL, origin: .conflict, isConflict: true)
                kept = true
            } catch {
                try? await document.close(discardingChanges: true)
                throw NotesError(error, note: title)
            }
        }
        do { try await document.save() } catch { throw NotesError(error, note: title) }
        if document.documentState.contains(.inConflict) { kept = true }
        try await close(document)
        print("Saved “\(name)”.")
        if kept {
            warn(
                "“\(name)” was changed by another process while the editor was open: that version is kept as a conflict "
                    + "(`notes conflicts`; settle it with `notes resolve \(NotesLibrary.quoted(name)) --keep current|ID` or `--merge`).")
        }
    }

    private func close(_ document: NoteDocument) async throws {
        do { try await document.close() } catch { throw NotesError(error, note: title) }
    }

    private static func read(_ file: URL) -> String? {
        (try? Data(contentsOf: file)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `$EDITOR FILE` (through the shell, so that EDITOR may hold arguments) with the
    /// terminal inherited; returns its exit status (128 + the signal for one killed by a signal).
    static func runEditor(on file: URL) async throws -> Int32 {
        let editor = ProcessInfo.processInfo.environment["EDITOR"].flatMap { $0.isEmpty ? nil : $0 } ?? "vi"
        let arguments = ["/bin/sh", "-c", editor + " \"$1\"", "sh", file.path]
        let spawned: pid_t = try arguments.withCStrings { argv in
            var pid: pid_t = 0
            let result = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
            guard result == 0 else {
                throw NotesError(.ioError, "can't run the editor (\(editor)): \(String(cString: strerror(result)))")
            }
            return pid
        }
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(spawned, &status, 0) == -1 && errno == EINTR {}
                let exited = status & 0x7f == 0
                continuation.resume(returning: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }
        }
    }
}

extension Array where Element == String {
    /// The strings as a NULL-terminated `char *const argv[]`, for the length of `body`.
    fileprivate func withCStrings<Result>(_ body: ([UnsafeMutablePointer<CChar>?]) throws -> Result) rethrows -> Result {
        let pointers = map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return try body(pointers)
    }
}
