import DocumentKit
import Foundation

/// A folder of notes, each a `<slug>.note` package. Every read and write of a note is
/// coordinated with other processes (see `FileCoordinator`).
struct NotesLibrary {
    let url: URL
    let coordinator: FileCoordinator

    /// The coordinator of this user's processes, for which `.note` folders are packages.
    static func makeCoordinator() throws -> FileCoordinator {
        do { return FileCoordinator(namespace: try .default(packageExtensions: [NoteFormat.packageExtension])) } catch {
            throw NotesError(.ioError, "can't set up coordination: \(error)")
        }
    }

    /// An entry of the library: where a note is, read.
    struct Entry {
        let url: URL
        let document: NoteDocument
        var note: Note { document.content }
        var modified: Date { document.fileWrapper?.modificationDate ?? Date(timeIntervalSince1970: 0) }
    }

    /// Creates the library folder if it is missing.
    func create() throws {
        do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
            throw NotesError(.ioError, "can't create the library folder \(url.path): \(error.localizedDescription)")
        }
    }

    /// The packages in the library, sorted by name.
    func packageURLs() throws -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw NotesError(.noSuchNote, "no library at \(url.path) (run `notes init` to create it)")
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: url.path) } catch {
            throw NotesError(.ioError, "can't list the library \(url.path): \(error.localizedDescription)")
        }
        return names.filter { !$0.hasPrefix(".") && $0.hasSuffix("." + NoteFormat.packageExtension) }.sorted()
            .map { url.appendingPathComponent($0, isDirectory: true) }
    }

    /// Every readable note; unreadable ones are reported through `problem`.
    func entries(problem: (URL, DocumentKitError) -> Void = { _, _ in }) async throws -> [Entry] {
        var result: [Entry] = []
        for packageURL in try packageURLs() {
            do {
                let document = try await NoteDocument.open(at: packageURL, coordinator: coordinator)
                result.append(Entry(url: packageURL, document: document))
            } catch {
                problem(packageURL, error)
            }
        }
        return result
    }

    /// The note whose title is `title` (exactly, else ignoring case), or whose package name is `title`.
    func find(_ title: String) async throws -> Entry {
        // The package name is the fast path: `Trip` → `trip.note`.
        var failures: [(URL, DocumentKitError)] = []
        let all = try await entries(problem: { failures.append(($0, $1)) })
        let exact = all.filter { $0.note.title == title }
        let matches = exact.isEmpty ? all.filter { $0.note.title.lowercased() == title.lowercased() } : exact
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 {
            throw NotesError(.usage, "“\(title)”: \(matches.count) notes have this title: \(matches.map(\.url.lastPathComponent).joined(separator: ", "))")
        }
        let byName = title.hasSuffix(".note") ? title : Self.slug(for: title) + ".note"
        if let entry = all.first(where: { $0.url.lastPathComponent == byName }) { return entry }
        if let failure = failures.first(where: { $0.0.lastPathComponent == byName }) {
            throw NotesError(failure.1, note: title)
        }
        throw NotesError(.noSuchNote, "“\(title)”: no such note in \(url.path)")
    }

    /// Changes the note at `url` under one coordinated write: the note is read again under the
    /// lock, changed and saved, so that two processes editing it at once both land.
    func edit(_ url: URL, title: String, _ change: @escaping @Sendable (inout Note) -> Void) async throws -> Note {
        try await coordinator.coordinate(with: [.writingIntent(with: url)]) { _ in
            do throws(DocumentKitError) {
                let document = try await NoteDocument.open(at: url, coordinator: coordinator)
                try document.update(change)
                try await document.close()
                return document.content
            } catch {
                throw NotesError(error, note: title)
            }
        }
    }

    /// A free package URL for a new note titled `title`.
    func newPackageURL(for title: String) -> URL {
        let base = Self.slug(for: title)
        var candidate = base
        var number = 2
        while FileManager.default.fileExists(atPath: url.appendingPathComponent(candidate + ".note").path) {
            candidate = "\(base)-\(number)"
            number += 1
        }
        return url.appendingPathComponent(candidate + ".note", isDirectory: true)
    }

    /// `My Trip!` → `my-trip`: lower-case letters and digits, dashes between words.
    static func slug(for title: String) -> String {
        var slug = ""
        for character in title.lowercased() {
            if character.isLetter || character.isNumber { slug.append(character) }
            else if !slug.isEmpty && !slug.hasSuffix("-") { slug.append("-") }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        slug = String(slug.prefix(64))
        return slug.isEmpty ? "note" : slug
    }
}
