import DocumentKit
import Foundation

extension NotesLibrary {
    /// Moves the staged note `item` (open as `document`, outside any version store) into the
    /// library under `title`, or, unless `exactTitle`, the first of "TITLE (2)", "TITLE (3)"…
    /// that no note has. Like ``create(_:)``, each title is tried under a coordinated write of
    /// the package named after it, with the check that no note has it. The note is saved in the
    /// staging folder first if its title changes, or if the library has a note with its document
    /// identifier (it gets one of its own); otherwise it moves in byte for byte as archived.
    ///
    /// - Returns: Where the note is now, and its title.
    func importNote(_ item: StagedItem, document: NoteDocument, from staged: StagedArchive, title wanted: String, exactTitle: Bool)
        async throws -> (url: URL, title: String)
    {
        let identifierTaken = await hasNote(withIdentifier: document.content.documentIdentifier.uuidString)
        for number in 1...Self.importTitleAttempts {
            let title = number == 1 ? wanted : "\(wanted) (\(number))"
            let lock = url.appendingPathComponent(Self.slug(for: title) + "." + NoteFormat.packageExtension, isDirectory: true)
            let mark = await markListing(for: [lock])
            let moved: URL? = try await coordinator.coordinate(with: [.writingIntent(with: lock)]) { _ in
                if let existing = await existingNote(titled: title) {
                    guard !exactTitle else {
                        throw NotesError(.cantCreate, "“\(title)”: a note titled “\(title)” exists already (\(existing.path))")
                    }
                    return nil
                }
                do throws(DocumentKitError) {
                    if title != document.content.title || identifierTaken {
                        try document.update {
                            $0.title = title
                            if identifierTaken { $0.documentIdentifier = UUID() }
                        }
                    }
                    try await document.close()
                    let name = newPackageURL(for: title).lastPathComponent
                    return try staged.moveIn(item, as: name, policy: .importAsCopy, coordinator: coordinator)
                } catch {
                    throw NotesError(error, note: title)
                }
            }
            if let moved {
                await noteChanges(at: [moved], since: mark)
                return (moved, title)
            }
        }
        throw NotesError(.cantCreate, "“\(wanted)”: \(Self.importTitleAttempts) notes have this title or a numbered one; give it another with --as")
    }

    /// How many titles ``importNote(_:document:from:title:exactTitle:)`` tries: "TITLE" to "TITLE (1000)".
    static let importTitleAttempts = 1_000

    /// Whether a note of the library has the document identifier `identifier` (through the index,
    /// else by reading every manifest).
    func hasNote(withIdentifier identifier: String) async -> Bool {
        if let index {
            await refreshIndex()
            for entry in await index.entries(withDocumentIdentifier: identifier) where Self.isNote(entry) {
                if await index.revalidate(relativePath: entry.relativePath) != nil { return true }
            }
            return false
        }
        return ((try? packageURLs()) ?? []).contains { Self.documentIdentifier(ofPackageAt: $0) == identifier }
    }
}
