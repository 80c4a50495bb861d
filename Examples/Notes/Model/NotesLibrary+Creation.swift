import DocumentKit
import Foundation

extension NotesLibrary {
    /// Creates `note` in a package of its own, in one coordinated step with the check that no
    /// note has its title: two `notes new` of one title at once create one note, and the other
    /// fails with `cantCreate`. Returns the new package's URL.
    ///
    /// Every creation of a title takes a coordinated write of the package named after the title's
    /// slug (whether it exists or not), together with reads of every note; under them the library
    /// is listed again (a note that appeared meanwhile means: take it in, and try again), the
    /// titles are read, and the note is written under a hidden name and renamed into place
    /// without replacing anything.
    ///
    /// With the index, only the write of the slug's package is taken: under it, the index's
    /// listing is brought up to date and the notes it lists under the title (and the packages
    /// named after the slug) are opened to check their titles; no other note is read.
    func create(_ note: Note) async throws -> URL {
        let lock = url.appendingPathComponent(Self.slug(for: note.title) + "." + NoteFormat.packageExtension, isDirectory: true)
        if index != nil {
            try requireFolder()
            let mark = await markListing(for: [lock])
            let created: URL = try await coordinator.coordinate(with: [.writingIntent(with: lock)]) { _ in
                if let existing = await existingNote(titled: note.title) {
                    throw NotesError(.cantCreate, "“\(note.title)”: a note titled “\(note.title)” exists already (\(existing.path))")
                }
                return try await write(note, at: newPackageURL(for: note.title))
            }
            await noteChanges(at: [created], since: mark)
            return created
        }
        for _ in 0..<Self.creationAttempts {
            let listed = try packageURLs()
            let intents = listed.map { FileAccessIntent.readingIntent(with: $0) } + [.writingIntent(with: lock)]
            let created: URL? = try await coordinator.coordinate(with: intents) { _ in
                guard Set(try packageURLs()).isSubset(of: Set(listed)) else { return nil }
                if let existing = try await entries().first(where: { $0.note.title == note.title }) {
                    throw NotesError(.cantCreate, "“\(note.title)”: a note titled “\(note.title)” exists already (\(existing.url.path))")
                }
                return try await write(note, at: newPackageURL(for: note.title))
            }
            if let created { return created }
        }
        throw NotesError(.busy, "“\(note.title)”: notes kept appearing in \(url.path) while this one was being created; try again")
    }

    /// How many times ``create(_:)`` looks again at a library whose notes changed meanwhile.
    static let creationAttempts = 20

    /// Writes the new note `note` at `destination` (inside ``create(_:)``'s coordination): saved
    /// under a hidden name first, then renamed to `destination` only if nothing is there.
    private func write(_ note: Note, at destination: URL) async throws -> URL {
        let hidden = url.appendingPathComponent(".creating-\(UUID().uuidString).\(NoteFormat.packageExtension)", isDirectory: true)
        let document = newDocument(at: destination, note: note)
        do {
            try await document.save(to: hidden, for: .saveTo)
            try coordinator.coordinate(writingItemAt: destination) { _ in try FileItem.move(from: hidden, to: destination) }
        } catch {
            try? FileItem.remove(at: hidden)
            guard let error = error as? DocumentKitError else { throw error }
            if error.code == .alreadyExists {
                throw NotesError(.cantCreate, "“\(note.title)”: can't create \(destination.path): something appeared there meanwhile (nothing was replaced)")
            }
            throw NotesError(error, note: note.title)
        }
        return destination
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
}
