import DocumentKit
import Foundation
import RaceTestSupport

/// The `saves` mode (see the header of main.swift): one document of the process's own, saved
/// `count` times, as a server saves many documents of one folder.
func saveRepeatedly(url: URL, library: URL, count: Int, kind: String, keepsVersions: Bool, coordinator: FileCoordinator) async {
    let options = SaveOptions(durability: .consistent)
    let document: Document<String> =
        kind == "file"
        ? RaceTextDocument(fileURL: url, content: "0", saveOptions: options, coordinator: coordinator)
        : RaceNoteDocument(fileURL: url, content: "0", saveOptions: options, coordinator: coordinator)
    if keepsVersions { document.versionStore = VersionStore(libraryURL: library, coordinator: coordinator, durability: .consistent) }
    document.autosavePolicy = nil
    var failures = 0
    for round in 1...count {
        do {
            try document.update { $0 = String(round) }
            try await document.save()
        } catch {
            failures += 1
            say("failed \(round) \(error.localizedDescription.replacingOccurrences(of: "\n", with: " "))")
        }
    }
    do { try await document.close() } catch { say("failed close \(error)") }
    say("done \(failures)")
}

/// The `edit` mode (see the header of main.swift): opens the note at `url`, prints
/// `opened BODY`, waits for a line on standard input, sets its body to `body`, saves, prints `saved CONFLICT` (the id of the conflict
/// version the save kept, or `-`) and closes it.
func editOnce(url: URL, library: URL, body: String, coordinator: FileCoordinator) async {
    let document = RaceNoteDocument(fileURL: url, saveOptions: SaveOptions(durability: .consistent), coordinator: coordinator)
    document.versionStore = VersionStore(libraryURL: library, coordinator: coordinator, durability: .consistent)
    document.presentsFile = false
    document.autosavePolicy = nil
    do {
        try await document.open()
        say("opened \(document.content)")
        awaitLine("save")
        try document.update { $0 = body }
        try await document.save()
        say("saved \(document.lastConflictVersion?.persistentIdentifier ?? "-")")
        try await document.close()
    } catch {
        fail("edit: \(error)", status: 3)
    }
}
