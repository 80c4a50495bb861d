import ArgumentParser
import CArchive
import DocumentKit
import Foundation

struct Tour: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A guided walk through what DocumentKit does, on a temporary library.")
    @Option(name: .long, help: "Run the tour in this folder instead of a temporary one (it must not exist yet).")
    var library: String?
    @Flag(help: "Keep the tour's library afterwards.") var keep = false

    func run() async throws {
        try await runReportingErrors {
            let root: URL
            if let library {
                root = URL(fileURLWithPath: library)
                guard !FileManager.default.fileExists(atPath: root.path) else {
                    throw NotesError(.cantCreate, "\(root.path) exists; the tour needs a new folder")
                }
            } else {
                root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("notes-tour-\(UUID().uuidString.prefix(8))")
            }
            let tour = TourGuide(library: NotesLibrary(url: root, coordinator: try NotesLibrary.makeCoordinator()))
            defer { if !keep { try? FileManager.default.removeItem(at: root) } }
            try await tour.run()
            print(keep ? "\nThe library stays at \(root.path)." : "\nThe tour's library is removed. Run `notes tour --keep` to look around in it.")
        }
    }
}

/// The steps of the tour.
struct TourGuide {
    let library: NotesLibrary

    func heading(_ number: Int, _ title: String) { print("\n\(number). \(title)\n" + String(repeating: "-", count: title.count + 3)) }
    func say(_ text: String) { print("   " + text.replacingOccurrences(of: "\n", with: "\n   ")) }

    func run() async throws {
        print("DocumentKit tour — a notes library at \(library.url.path)")
        try library.create()

        heading(1, "Notes are packages, saved atomically")
        for (title, body) in [("Trip to Lisbon", "Pack light.\n"), ("Groceries", "Eggs\nBread\n"), ("Ideas", "")] {
            let document = NoteDocument(
                fileURL: library.newPackageURL(for: title), content: Note(title: title, body: body), coordinator: library.coordinator)
            try await document.save()
        }
        let trip = library.url.appendingPathComponent("trip-to-lisbon.note")
        say("Created 3 notes. Each is a folder holding Info.json (the manifest: format, version, the size and")
        say("SHA-256 of every member) and \(NoteFormat.blocksName) (the body, as blocks):")
        for name in try listing(library.url) { say("  \(name)") }
        say("A save builds the new package beside the old one (.<name>.dk-new-…), flushes it, and swaps")
        say("it in with one renameat2(RENAME_EXCHANGE): a crash at any instant leaves the old note or the new, whole.")

        heading(2, "Unchanged members are hard-linked, not copied")
        let photo = library.url.appendingPathComponent("photo.jpg")
        try Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: photo)
        let document = try await NoteDocument.open(at: trip, coordinator: library.coordinator)
        try document.update { $0.attachments["photo.jpg"] = try? FileWrapper(contentsOf: photo) }
        try await document.save()
        try FileManager.default.removeItem(at: photo)
        let before = try FileWrapper(contentsOf: trip)
        try document.update { $0.appendLine("Book the tram to Belém.") }
        try await document.save()
        let after = try FileWrapper(contentsOf: trip)
        for member in ["attachments/photo.jpg", "Info.json", NoteFormat.blocksName] {
            let old = before.fileWrapper(atPath: member)?.fileIdentity?.inode ?? 0
            let new = after.fileWrapper(atPath: member)?.fileIdentity?.inode ?? 0
            say("\(member.padding(toLength: 22, withPad: " ", startingAt: 0)) inode \(old) → \(new)  \(old == new ? "(same file: linked)" : "(rewritten)")")
        }
        say("Editing the body rewrote \(NoteFormat.blocksName) and the manifest (its record of the body changed);")
        say("the 1 MiB photo was linked into the new package, and its digest was not computed again.")

        heading(3, "A crash leaves litter, never a broken note")
        let litter = library.url.appendingPathComponent(".trip-to-lisbon.note.dk-new-\(TemporaryName.randomSuffix())")
        try FileManager.default.createDirectory(at: litter, withIntermediateDirectories: false)
        try Data("half a save".utf8).write(to: litter.appendingPathComponent("body.md"))
        say("Pretend a save was killed (SIGKILL) half-way; the folder now holds:")
        for name in try listing(library.url) where name.hasPrefix(".") { say("  \(name)") }
        let reopened = try await NoteDocument.open(at: trip)
        say("Opening the note finds the temporary tree unlocked (its owner is dead) and removes it:")
        say("  leftovers now: \(try listing(library.url).filter { $0.hasPrefix(".") }.count)")
        say("  the note still reads: \(reopened.content.body.split(separator: "\n").last ?? "")")

        heading(4, "On file systems without RENAME_EXCHANGE, an intent record keeps the name safe")
        say("NFS and some FUSE file systems refuse the atomic exchange. DocumentKit then writes an intent")
        say("record, renames the old package aside and the new one in; a crash between the two renames is")
        say("completed at the next open. Simulating that crash now:")
        let simulated = try await simulateInterruptedFallbackSwap()
        say("  before the open: \(simulated.before)")
        say("  after the open:  \(simulated.after)")

        heading(5, "Bad data gets a clear error, and nothing is lost")
        let broken = library.url.appendingPathComponent("groceries.note/Info.json")
        let original = try Data(contentsOf: broken)
        try Data("{ not json".utf8).write(to: broken)
        do {
            _ = try await NoteDocument.open(at: library.url.appendingPathComponent("groceries.note"))
        } catch {
            say("notes: \(error)")
        }
        try original.write(to: broken)
        say("(The tour put the manifest back.) A save that fails — disk full, I/O error — leaves the note on")
        say("disk as it was and the edits in memory, and says which step failed on which file.")

        heading(6, "Every note says which versions may read and change it")
        let manifest = try DocumentManifest(
            package: try FileWrapper(contentsOf: trip), manifestName: NoteFormat.manifestName, packagePath: trip.path)
        say("trip-to-lisbon.note is in format \(manifest.formatIdentifier) \(manifest.formatVersion), readable by versions")
        say("\(manifest.minimumReaderVersion) and later, changeable by \(manifest.minimumWriterVersion) and later, written by \(manifest.writer.name) \(manifest.writer.version).")
        say("An older note is upgraded in memory and written in the new format at its next save (`notes migrate`")
        say("does it now); a newer one opens read-write, read-only or not at all, as its manifest says; a note a")
        say("sync delivered half-way is refused (\"2 of 3 members match\"). `notes check` reports all of it.")

        heading(7, "Every save keeps the version it replaces")
        let groceries = library.url.appendingPathComponent("groceries.note")
        _ = try await library.edit(groceries, title: "Groceries") { $0.appendLine("Milk") }
        _ = try await library.edit(groceries, title: "Groceries") { $0.body = "Only coffee.\n" }
        let listing = try library.versions(of: groceries, title: "Groceries")
        say("Edited “Groceries” twice. Each save kept the version it replaced in the library's hidden")
        say("\(VersionStore.folderName) folder (members the versions share are hard-linked). `notes versions Groceries`:")
        let summaries = [listing.current].compactMap { $0 }.map(VersionSummary.init) + listing.others.map(VersionSummary.init)
        for line in VersionTable.text(summaries).split(separator: "\n") { say("  " + line) }
        if let first = listing.others.last {
            _ = try await library.replace(groceries, title: "Groceries", with: first)
            let body = try await library.open(groceries).content.body
            say("`notes restore Groceries \(first.persistentIdentifier)` brought the first version back:")
            say("  \(body.split(separator: "\n").joined(separator: " / ")) — and kept the one it replaced: "
                + "\(try library.versions(of: groceries, title: "Groceries").others.count) versions now.")
        }
        say("A conflict copy a sync engine (Syncthing, Dropbox, Nextcloud…) leaves becomes a conflict version:")
        say("`notes conflicts` lists them, `notes resolve TITLE --keep current|ID` or `--merge` settles them.")

        heading(8, "Archives in and out, and nothing hostile gets in")
        // The tour's files stay inside its own new library folder (never at a fixed name in /tmp).
        let workspace = library.url.appendingPathComponent(".tour-archives", isDirectory: true)
        try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: workspace) }
        let archive = workspace.appendingPathComponent("tour-export.zip")
        let summary = try await DocumentArchiver.export(
            itemsAt: try library.packageURLs(), to: archive, options: ArchiveExportOptions(format: .zip, isDeterministic: true),
            coordinator: library.coordinator)
        say("`notes export --all --to \(archive.lastPathComponent)` wrote \(summary.entryCount) entries (\(summary.archiveBytes) bytes) through")
        say("\(LibArchive.version): each note read under a coordinated read, the zip swapped in whole.")
        let other = workspace.appendingPathComponent("Imported", isDirectory: true)
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
        let staged = try await DocumentArchiver.extract(archiveAt: archive, into: other)
        say("Importing it into another folder extracts into a hidden, locked folder there, checks every note")
        say("against its manifest, then renames each in (never over anything):")
        for item in staged.items {
            try DocumentArchiver.verifyManifest(of: item, manifestName: NoteFormat.manifestName, archiveURL: archive)
            let moved = try staged.moveIn(item, policy: .importAsCopy, coordinator: library.coordinator)
            say("  \(item.name) → Imported/\(moved.lastPathComponent)")
        }
        staged.discard()
        let hostile = workspace.appendingPathComponent("tour-hostile.tar.gz")
        try Self.writeHostileArchive(to: hostile)
        do {
            _ = try await DocumentArchiver.importItems(from: hostile, into: library.url)
        } catch {
            say("An archive whose entry climbs out of the library is refused whole (exit status 65 in `notes import`):")
            say("  notes: \(error)")
        }

        heading(9, "What is linked in")
        say("Archives: \(LibArchive.version); export formats here: \(ArchiveFormat.available.map(\.rawValue).joined(separator: ", ")).")
        say("Try: notes --help, notes new \"Title\" --body -, notes list --json, notes show \"Title\" --json, notes versions \"Title\", notes check,")
        say("notes export --all --to notes.zip, notes import notes.zip.")
    }

    /// A tar.gz whose one entry is named `../escaped.txt`, written with libarchive's writer as an
    /// attacker would.
    static func writeHostileArchive(to url: URL) throws {
        guard let archive = archive_write_new() else { return }
        defer { archive_write_free(archive) }
        archive_write_set_format_pax_restricted(archive)
        archive_write_add_filter_gzip(archive)
        guard archive_write_open_filename(archive, url.path) == ARCHIVE_OK, let entry = archive_entry_new() else { return }
        defer { archive_entry_free(entry) }
        let bytes = Array("escaped\n".utf8)
        archive_entry_set_pathname(entry, "../escaped.txt")
        archive_entry_set_filetype(entry, 0o100000)
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_size(entry, Int64(bytes.count))
        archive_write_header(archive, entry)
        archive_write_data(archive, bytes, bytes.count)
        archive_write_close(archive)
    }

    /// Leaves the state a crash between the fallback swap's two renames leaves, then opens the note.
    private func simulateInterruptedFallbackSwap() async throws -> (before: String, after: String) {
        let ideas = library.url.appendingPathComponent("ideas.note")
        let tree = try FileWrapper(contentsOf: ideas)
        var updated = tree
        // A complete package, as a real save writes it: the new body, and a manifest recording it.
        updated[NoteFormat.blocksName] = FileWrapper(
            regularFileWithContents: try NoteBody(text: "Written by the interrupted save.\n").jsonData())
        var manifest = try DocumentManifest(package: tree, manifestName: NoteFormat.manifestName, packagePath: ideas.path)
        var hasher = MemberHasher()
        manifest.members = try hasher.memberRecords(
            of: updated, manifestName: NoteFormat.manifestName, previous: manifest.members, packagePath: ideas.path)
        updated[NoteFormat.manifestName] = FileWrapper(regularFileWithContents: try manifest.jsonData())
        let newName = TemporaryName.make(for: "ideas.note", purpose: "new")
        let oldName = TemporaryName.make(for: "ideas.note", purpose: "old")
        try updated.write(to: library.url.appendingPathComponent(newName), options: SaveOptions(durability: .consistent))
        try FileManager.default.moveItem(at: ideas, to: library.url.appendingPathComponent(oldName))
        let intent = "DocumentKit rename intent 1\nnew=\(newName)\nold=\(oldName)\n"
        try Data(intent.utf8).write(to: library.url.appendingPathComponent(".ideas.note.dk-intent"))
        let before = try listing(library.url).filter { $0.contains("ideas") }.joined(separator: "  ")
        let document = try await NoteDocument.open(at: ideas)
        let after = try listing(library.url).filter { $0.contains("ideas") }.joined(separator: "  ")
        return (before, after + " — body: \(document.content.body.trimmingCharacters(in: .newlines))")
    }

    private func listing(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}
