import DocumentKitTesting
import Foundation
import Testing

/// Issue #12 §5: a save cut off between the two renames of the fallback swap (file systems
/// without `RENAME_EXCHANGE`) leaves the note only under hidden names. `notes list` and `notes
/// new` used to take it for deleted, and a new note of that title led recovery to delete both trees.
@Suite struct NotesInterruptedSwapTests {
    /// A library with the note "Trip" whose fallback swap was cut off after the old tree went aside:
    /// the new tree and the old one are under hidden names, the rename intent beside them.
    static func interruptedLibrary() throws -> (TemporaryDirectory, NotesRunner) {
        let directory = try TemporaryDirectory(prefix: "notes-interrupted-swap")
        let notes = NotesRunner(library: directory.appending("Library"))
        try notes.ok(["init"])
        try notes.ok(["new", "Trip", "--body", "old text"])
        let library = notes.library
        let package = library.appendingPathComponent("trip.note")
        let staging = directory.appending("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        // The new tree: a copy of the note, edited by a second notes library, built elsewhere.
        let other = NotesRunner(library: staging.appendingPathComponent("Other"))
        try other.ok(["init"])
        try FileManager.default.copyItem(at: package, to: other.library.appendingPathComponent("trip.note"))
        try other.ok(["edit", "Trip", "--append", "new text"])
        let (newName, oldName) = (".trip.note.dk-new-k7m2xq9rbw3p", ".trip.note.dk-old-a8c4hj2n5s6t")
        try FileManager.default.moveItem(at: other.library.appendingPathComponent("trip.note"), to: library.appendingPathComponent(newName))
        try FileManager.default.moveItem(at: package, to: library.appendingPathComponent(oldName))
        try Data("DocumentKit rename intent 1\nnew=\(newName)\nold=\(oldName)\n".utf8)
            .write(to: library.appendingPathComponent(".trip.note.dk-intent"))
        return (directory, notes)
    }

    @Test("notes list completes the interrupted swap: the note is listed with its new text")
    func listCompletesTheSwap() throws {
        let (directory, notes) = try Self.interruptedLibrary()
        defer { withExtendedLifetime(directory) {} }
        let listed = try notes.ok(["list"])
        #expect(listed.contains("Trip"), "\(listed)")
        #expect(try notes.ok(["show", "Trip"]).contains("new text"))
        let names = try FileManager.default.contentsOfDirectory(atPath: notes.library.path)
        #expect(!names.contains { $0.contains(".dk-") }, "\(names)")
    }

    @Test("notes new of the same title finds the note instead of making a second one over its trees")
    func newFindsTheInterruptedNote() throws {
        let (directory, notes) = try Self.interruptedLibrary()
        defer { withExtendedLifetime(directory) {} }
        let result = try notes.run(["new", "Trip", "--body", "another"])
        #expect(result.status != 0, "\(result.stdout)")
        #expect(try notes.ok(["show", "Trip"]).contains("new text"))
    }
}
