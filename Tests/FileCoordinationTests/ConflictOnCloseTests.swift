// Issue #12 §3: an open document with unsaved changes; another process saves the same note; the
// document is then saved (as `close()` does). Whatever the timing, the state that a save replaced
// without being based on it is an unresolved conflict version, every conflict the document
// announces is one, and the document is `inConflict` exactly when it has unresolved conflicts.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import RaceTestSupport
import Testing

@Suite("A conflict on close, across processes")
struct ConflictOnCloseTests {
    static let runs = 200

    @Test("another process's save under unsaved edits always becomes an unresolved conflict version, never an ordinary one")
    func anotherProcessSaveIsAlwaysAConflict() async throws {
        let fixture = try Fixture()
        let library = fixture.items.url
        let store = VersionStore(libraryURL: library, coordinator: fixture.coordinator, durability: .consistent)
        let options = SaveOptions(durability: .consistent)
        var random = SeededRandom(seed: 12)
        var problems: [String] = []
        var cases: [String: Int] = [:]
        for run in 0..<Self.runs {
            let name = "note\(run).pkg"
            let url = library.appendingPathComponent(name)
            let (base, mine, theirs) = ("base-\(run)", "mine-\(run)", "theirs-\(run)")
            let creator = RaceNoteDocument(fileURL: url, content: base, saveOptions: options, coordinator: fixture.coordinator)
            creator.versionStore = store
            creator.autosavePolicy = nil
            try await creator.save()
            try await creator.close()

            let document = RaceNoteDocument(fileURL: url, saveOptions: options, coordinator: fixture.coordinator)
            document.versionStore = store
            document.autosavePolicy = nil
            try await document.open()
            let events = document.events()
            let announced = Task { () -> [FileVersion] in
                var versions: [FileVersion] = []
                for await event in events { if case .conflictGained(let version) = event { versions.append(version) } }
                return versions
            }
            // The other process opens the note as it is (base), then this document gets edits.
            let child = try Child(
                ["edit", fixture.namespaceFolder.url.path, fixture.extensionsArgument, library.path, name, theirs],
                outputFolder: fixture.namespaceFolder.url)
            let deadline = ContinuousClock.now + .seconds(60)
            while !child.output.contains("\n"), !child.hasExited, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            guard child.output.hasPrefix("opened ") else {
                problems.append("run \(run): the other process did not open the note: \(child.errorOutput.suffix(400))")
                continue
            }
            try document.update { $0 = mine }
            // Jitter: the other save lands before, during or after this one.
            child.release()
            let pause = Int(random.next() % 40)
            if pause > 0 { try await Task.sleep(for: .milliseconds(pause)) }
            try await document.save()
            let stateAfterSave = document.documentState
            let unresolvedAfterSave = try document.unresolvedConflictVersions()
            if stateAfterSave.contains(.inConflict) && unresolvedAfterSave.isEmpty {
                problems.append("run \(run): inConflict with no unresolved conflict version")
            }
            let status = await child.exitStatus(timeout: .seconds(60))
            guard status == 0 else {
                problems.append("run \(run): the other process exited \(String(describing: status)): \(child.errorOutput.suffix(400))")
                continue
            }
            try await document.close()
            for version in await announced.value where !version.isConflict {
                problems.append("run \(run): conflictGained announced a version that is no conflict (\(version.origin.map { "\($0)" } ?? "no origin"), \(version.persistentIdentifier))")
            }

            // What the store holds now.
            let childOpened = child.output.split(separator: "\n").first { $0.hasPrefix("opened ") }.map { String($0.dropFirst(7)) }
            let current = String(decoding: try Data(contentsOf: url.appendingPathComponent("body.txt")), as: UTF8.self)
            let listing = try store.versions(ofItemAt: url)
            if !listing.problems.isEmpty { problems.append("run \(run): store problems \(listing.problems)") }
            var kept: [String: FileVersion] = [:]
            for version in listing.others {
                let body = String(decoding: try Data(contentsOf: version.url.appendingPathComponent("body.txt")), as: UTF8.self)
                if let other = kept[body], other.isUnresolvedConflict { continue }
                kept[body] = version
            }
            guard current == mine || current == theirs else {
                problems.append("run \(run): the note holds \(current)")
                continue
            }
            let loser = current == mine ? theirs : mine
            // The winner's save was based on the loser only if it read it first: the other process
            // opened `base`, so only this document could have (by reloading `theirs`, which would
            // then be its content, not `mine`).
            cases["\(current == mine ? "mine" : "theirs") current", default: 0] += 1
            guard childOpened == base else {
                problems.append("run \(run): the other process opened \(childOpened ?? "nothing"), not \(base)")
                continue
            }
            guard let version = kept[loser] else {
                problems.append("run \(run): \(loser) is lost (current \(current))")
                continue
            }
            if !version.isUnresolvedConflict {
                problems.append("run \(run): \(loser), replaced by a save not based on it, is kept as \(version.origin.map { "\($0)" } ?? "no origin"), not as an unresolved conflict")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) of \(Self.runs) runs went wrong: \(problems.prefix(6))")
        // The jitter must have produced both orders, else the test proved little.
        #expect(cases.count == 2, "\(cases)")
        print("ConflictOnCloseTests: \(cases.sorted { $0.key < $1.key })")
    }
}
