// Issue #12 §1: saves of *different* documents in one folder must never fail because of each
// other. Every save sweeps its folder for what interrupted saves left (temporary items that no
// live process holds); a sweep must never take a sibling save's temporary item for litter, nor
// hold it so that the sibling's own lock fails. Real processes, each saving its own document of
// one folder, and one process's task group saving many: zero failures, every kept version present.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import RaceTestSupport
import Testing

@Suite("Saves of different documents in one folder")
struct SavesOfDifferentDocumentsTests {
    enum Kind: String, CaseIterable, Sendable { case package, file }

    static func name(_ index: Int, _ kind: Kind) -> String { kind == .package ? "doc\(index).pkg" : "doc\(index).txt" }

    /// Runs `processes` children, each saving its own document `saves` times; returns every
    /// failure line they printed (empty when all went well).
    static func runProcesses(
        _ fixture: Fixture, processes: Int, saves: Int, kind: Kind, keepsVersions: Bool
    ) async throws -> [String] {
        let children = try (0..<processes).map { index in
            try Child(
                [
                    "saves", fixture.namespaceFolder.url.path, fixture.extensionsArgument, fixture.items.url.path,
                    name(index, kind), String(saves), kind.rawValue, keepsVersions ? "store" : "none",
                ], outputFolder: fixture.namespaceFolder.url)
        }
        var problems: [String] = []
        for (index, child) in children.enumerated() {
            let status = await child.exitStatus(timeout: .seconds(300))
            let lines = child.output.split(separator: "\n").map(String.init)
            problems += lines.filter { $0.hasPrefix("failed") }.map { "process \(index): \($0)" }
            if status != 0 || !lines.contains("done 0") {
                problems.append("process \(index) exited \(status.map(String.init) ?? "by a signal"): \(child.errorOutput.suffix(600))")
            }
        }
        return problems
    }

    /// Checks that each document holds its last save and, with a store, that the store kept
    /// every replaced version (`saves - 1` each, all different) and reports no problem.
    static func checkResults(_ fixture: Fixture, documents: Int, saves: Int, kind: Kind, keepsVersions: Bool) throws {
        let store = VersionStore(libraryURL: fixture.items.url, coordinator: fixture.coordinator, durability: .consistent)
        for index in 0..<documents {
            let url = fixture.url(name(index, kind))
            let body = kind == .package ? url.appendingPathComponent("body.txt") : url
            #expect(String(decoding: try Data(contentsOf: body), as: UTF8.self) == String(saves), "\(url.lastPathComponent)")
            guard keepsVersions else { continue }
            let listing = try store.versions(ofItemAt: url)
            #expect(listing.problems.isEmpty, "\(url.lastPathComponent): \(listing.problems)")
            #expect(listing.others.count == saves - 1, "\(url.lastPathComponent) kept \(listing.others.count) of \(saves - 1) versions")
            #expect(Set(listing.others.map(\.persistentIdentifier)).count == listing.others.count)
        }
        // Nothing a save made is left behind in the folder.
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.items.url.path)
        #expect(names.filter { $0.contains(TemporaryName.marker) }.isEmpty, "left behind: \(names.sorted())")
    }

    @Test(
        "processes saving their own documents of one folder never fail, and every kept version is there",
        arguments: [(Kind.package, true), (.package, false), (.file, true), (.file, false)])
    func processesSavingTheirOwnDocuments(kind: Kind, keepsVersions: Bool) async throws {
        let fixture = try Fixture()
        let processes = 4
        let saves = 60
        let problems = try await Self.runProcesses(fixture, processes: processes, saves: saves, kind: kind, keepsVersions: keepsVersions)
        #expect(problems.isEmpty, "\(problems.count) failures: \(problems.prefix(5))")
        try Self.checkResults(fixture, documents: processes, saves: saves, kind: kind, keepsVersions: keepsVersions)
    }

    @Test(
        "a task group saving many documents of one folder at once never fails",
        arguments: [(Kind.package, true), (.package, false), (.file, true), (.file, false)])
    func taskGroupSavingManyDocuments(kind: Kind, keepsVersions: Bool) async throws {
        let fixture = try Fixture()
        let documents = 40
        let saves = 8
        let store = VersionStore(libraryURL: fixture.items.url, coordinator: fixture.coordinator, durability: .consistent)
        let failures = await withTaskGroup(of: [String].self) { group in
            for index in 0..<documents {
                group.addTask {
                    let url = fixture.url(Self.name(index, kind))
                    let options = SaveOptions(durability: .consistent)
                    let document: Document<String> =
                        kind == .file
                        ? RaceTextDocument(fileURL: url, content: "0", saveOptions: options, coordinator: fixture.coordinator)
                        : RaceNoteDocument(fileURL: url, content: "0", saveOptions: options, coordinator: fixture.coordinator)
                    if keepsVersions { document.versionStore = store }
                    document.autosavePolicy = nil
                    var failures: [String] = []
                    for round in 1...saves {
                        do {
                            try document.update { $0 = String(round) }
                            try await document.save()
                        } catch {
                            failures.append("\(url.lastPathComponent) round \(round): \(error.localizedDescription)")
                        }
                    }
                    try? await document.close()
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(5))")
        try Self.checkResults(fixture, documents: documents, saves: saves, kind: kind, keepsVersions: keepsVersions)
    }
}
