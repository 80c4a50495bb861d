@testable import DocumentIndexing
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@Suite("Index live updates")
struct IndexLiveTests {
    @Test("the first batch gathers every entry; an added, an edited and a removed note arrive as update batches")
    func gatheredThenUpdates() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        #expect(collector.batches.first?.added.map(\.relativePath) == ["A.note"])

        try library.writeNote("B.note", title: "B")
        #expect(await collector.wait { $0.updates.addedPaths.contains("B.note") })
        let id = try #require(await index.entry(atRelativePath: "A.note")?.documentIdentifier)
        try library.writeNote("A.note", title: "A2", identifier: id)
        #expect(await collector.wait { $0.updates.flatMap(\.changed).contains { $0.key == "A2" } })
        try FileManager.default.removeItem(atPath: library.path("B.note"))
        #expect(await collector.wait { $0.updates.removedPaths.contains("B.note") })
        let sequences = collector.batches.updates.map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        await index.close()
        #expect(await collector.waitForEnd())
    }

    @Test("a note moved to another folder is one move, recognised by its document identifier")
    func moveAcrossFolders() async throws {
        let library = try IndexTestLibrary()
        let id = try library.writeNote("A.note", title: "A")
        try FileManager.default.createDirectory(atPath: library.path("Sub"), withIntermediateDirectories: true)
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        try FileManager.default.moveItem(atPath: library.path("A.note"), toPath: library.path("Sub/Moved.note"))
        #expect(await collector.wait { !$0.updates.isEmpty })
        try await index.sync()
        let updates = collector.batches.updates
        #expect(updates.flatMap(\.moved).map { [$0.from.relativePath, $0.to.relativePath] } == [["A.note", "Sub/Moved.note"]])
        #expect(updates.flatMap(\.moved).first?.to.documentIdentifier == id)
        #expect(updates.addedPaths.isEmpty && updates.removedPaths.isEmpty)
        await index.close()
    }

    @Test("mkdir -p a/b/c and a note in it, in one burst, arrive as the note added")
    func burstOfFolders() async throws {
        let library = try IndexTestLibrary()
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        try library.writeNote("a/b/c/Deep.note", title: "Deep")
        #expect(await collector.wait { $0.updates.addedPaths == ["a/b/c/Deep.note"] })
        // And the new folders are watched: a note added to the deepest arrives too.
        try library.writeNote("a/b/c/Later.note", title: "Later")
        #expect(await collector.wait { $0.updates.addedPaths == ["a/b/c/Deep.note", "a/b/c/Later.note"] })
        await index.close()
    }

    @Test("a member a sync engine renames into an existing package turns it from incomplete to current")
    func memberDeliveredIntoPackage() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A", body: "hello")
        try FileManager.default.removeItem(atPath: library.path("A.note/body.txt"))
        let index = try DocumentIndex(library.configuration(persistent: false))
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        guard case .incomplete? = collector.batches.first?.added.first?.state else { Issue.record("not incomplete"); return }
        // Syncthing: a temporary file in the package, renamed into place.
        try Data("hello".utf8).write(to: URL(fileURLWithPath: library.path("A.note/.syncthing.body.txt.tmp")))
        #expect(rename(library.path("A.note/.syncthing.body.txt.tmp"), library.path("A.note/body.txt")) == 0)
        #expect(await collector.wait { $0.updates.flatMap(\.changed).contains { $0.state == .current } })
        await index.close()
    }

    @Test("notes written while the index gathers appear exactly once, and the index ends equal to a fresh scan")
    func changesDuringGathering() async throws {
        let library = try IndexTestLibrary()
        for n in 0..<30 { try library.writeNote("Old\(n).note", title: "Old \(n)") }
        let index = try DocumentIndex(library.configuration())
        let writer = Task.detached {
            for n in 0..<30 { try library.writeNote("New\(n).note", title: "New \(n)") }
        }
        let collector = BatchCollector(index.updates())
        try await writer.value
        try await index.sync()
        #expect(await collector.wait { $0.addedPaths.filter { $0.hasPrefix("New") }.count >= 30 })
        try await index.sync()
        let added = collector.batches.addedPaths
        #expect(added.count == 60 && Set(added).count == 60, "\(added.count) added")
        #expect(collector.batches.removedPaths.isEmpty)
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        let live = await index.entries
        let scanned = await fresh.entries
        #expect(live == scanned, "\(differences(live, scanned, "live", "fresh"))")
        await index.close()
    }

    @Test("a package read damaged (its manifest mid-write) whose watch came too late to hear the rest is read again by sync()")
    func damagedReadAgainBySync() async throws {
        let library = try IndexTestLibrary()
        let id = try library.writeNote("A.note", title: "A")
        let manifest = URL(fileURLWithPath: library.path("A.note/Info.json"))
        let whole = try Data(contentsOf: manifest)
        try whole.prefix(whole.count / 2).write(to: manifest)
        let index = try DocumentIndex(library.configuration(persistent: false))
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        guard case .damaged? = await index.entry(atRelativePath: "A.note")?.state else { Issue.record("not damaged"); return }
        await index.loseWatch(ofPackage: "A.note")
        try whole.write(to: manifest)
        try await index.sync()
        let entry = await index.entry(atRelativePath: "A.note")
        #expect(entry?.state == .current && entry?.documentIdentifier == id, "\(String(describing: entry))")
        await index.close()
    }

    @Test("after a (simulated) event queue overflow, a rescan publishes exactly the lost changes and equals a fresh scan")
    func overflowRescan() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("Keep.note", title: "Keep")
        try library.writeNote("Gone.note", title: "Gone")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        await index.holdEvents(true)
        try FileManager.default.removeItem(atPath: library.path("Gone.note"))
        try library.writeNote("Fresh.note", title: "Fresh")
        try await Task.sleep(for: .milliseconds(100))
        await index.simulateOverflow()
        #expect(await collector.wait { !$0.updates.isEmpty })
        let updates = collector.batches.updates
        #expect(updates.addedPaths == ["Fresh.note"] && updates.removedPaths == ["Gone.note"])
        let fresh = try DocumentIndex(library.configuration(persistent: false))
        #expect(await index.entries == fresh.entries)
        #expect(await index.notices.contains { $0.contains("overflowed") })
        await index.close()
    }

    @Test("sync() returns once every change made before it is in the index")
    func syncIsABarrier() async throws {
        let library = try IndexTestLibrary()
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        for n in 0..<5 { try library.writeNote("N\(n).note", title: "N\(n)") }
        try await index.sync()
        #expect(await index.entries.count == 5)
        // The cookie file is gone, and never listed.
        #expect(try FileManager.default.contentsOfDirectory(atPath: library.url.path).filter { $0.hasPrefix(".") }.isEmpty)
        await index.close()
    }

    @Test("the library folder deleted ends the update sequence with an error")
    func folderDeletedEndsTheSequence() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        try FileManager.default.removeItem(at: library.url)
        #expect(await collector.waitForEnd())
        #expect(collector.failure?.code == .notFound)
        await index.close()
    }
}

@Suite("Index watch budget")
struct IndexWatchBudgetTests {
    @Test("past the package watch budget, the stat sweep catches a member delivered into a package, with a notice")
    func sweepBeyondTheBudget() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A", body: "hello")
        try FileManager.default.removeItem(atPath: library.path("A.note/body.txt"))
        var configuration = library.configuration(persistent: false)
        configuration.packageWatchBudget = 0
        configuration.sweepInterval = .milliseconds(200)
        let index = try DocumentIndex(configuration)
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        try Data("hello".utf8).write(to: URL(fileURLWithPath: library.path("A.note/.syncthing.body.txt.tmp")))
        #expect(rename(library.path("A.note/.syncthing.body.txt.tmp"), library.path("A.note/body.txt")) == 0)
        #expect(await collector.wait { $0.updates.flatMap(\.changed).contains { $0.state == .current } })
        #expect(await index.notices.contains { $0.contains("degraded") && $0.contains("budget") })
        await index.close()
    }
}

@Suite("Index watches of packages that went")
struct IndexReleasedWatchTests {
    @Test("packages added and removed one after another, more in all than the watch budget, never use it up")
    func removedPackagesGiveTheirWatchesBack() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A", body: "hello")
        try FileManager.default.removeItem(atPath: library.path("A.note/body.txt"))
        var configuration = library.configuration(persistent: false)
        configuration.packageWatchBudget = 3
        configuration.sweepInterval = .seconds(600)
        let index = try DocumentIndex(configuration)
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        for round in 0..<6 {
            let name = "B\(round).note"
            try library.writeNote(name, title: "B\(round)")
            #expect(await collector.wait { $0.updates.flatMap(\.added).contains { $0.relativePath == name } })
            // Told by this process, as a server's save tells it: the index watches it at once.
            await index.noteChanges(at: [name])
            try FileManager.default.removeItem(atPath: library.path(name))
            #expect(await collector.wait { $0.updates.flatMap(\.removed).contains { $0.relativePath == name } })
        }
        // A member delivered into a package is seen through the package's watch (the sweep is ten minutes away).
        try Data("hello".utf8).write(to: URL(fileURLWithPath: library.path("A.note/.syncthing.body.txt.tmp")))
        #expect(rename(library.path("A.note/.syncthing.body.txt.tmp"), library.path("A.note/body.txt")) == 0)
        #expect(await collector.wait { $0.updates.flatMap(\.changed).contains { $0.relativePath == "A.note" && $0.state == .current } })
        let notices = await index.notices
        #expect(!notices.contains { $0.contains("degraded") }, "notices: \(notices)")
        await index.close()
    }
}

@Suite("Index library identity")
struct IndexLibraryIdentityTests {
    @Test("a library moved away and replaced by another folder at its path ends the updates with an error")
    func libraryReplaced() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        let aside = library.url.deletingLastPathComponent().appendingPathComponent("aside-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: library.url, to: aside)
        defer { try? FileManager.default.removeItem(at: aside) }
        try FileManager.default.createDirectory(at: library.url, withIntermediateDirectories: true)
        await #expect(throws: DocumentKitError.self) { try await index.refresh() }
        #expect(await collector.waitForEnd())
        #expect(collector.failure != nil)
        await index.close()
    }
}

@Suite("Index live updates without listings")
struct IndexLiveNamedTests {
    @Test("a swapped, an added and a removed package are taken from the events' names: the library folder is not listed again")
    func namedEventsNeedNoListing() async throws {
        let library = try IndexTestLibrary()
        for name in ["A", "B", "C"] { try library.writeNote("\(name).note", title: name) }
        let faults = FaultInjector()
        let index = try DocumentIndex(library.configuration(fileSystem: faults.fileSystem))
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        let listings = { faults.trace.filter { $0.call == .listDirectory && $0.name == library.url.standardizedFileURL.path }.count }
        let before = listings()

        // A save's swap: the new tree under a hidden name, renamed over the old one's place.
        try library.writeNote(".B.note.tmp", title: "B2")
        try FileManager.default.removeItem(atPath: library.path("B.note"))
        try FileManager.default.moveItem(atPath: library.path(".B.note.tmp"), toPath: library.path("B.note"))
        // A new package, as a save makes one: built under a hidden name and renamed into place (one
        // written member by member in place can be read half-written, held until it settles, and its
        // folder listed then: that is the settling path, not this one).
        try library.writeNote(".D.note.tmp", title: "D")
        try FileManager.default.moveItem(atPath: library.path(".D.note.tmp"), toPath: library.path("D.note"))
        try FileManager.default.removeItem(atPath: library.path("C.note"))
        try await index.sync()
        #expect(collector.batches.updates.addedPaths == ["D.note"])
        #expect(collector.batches.updates.removedPaths == ["C.note"])
        #expect(collector.batches.updates.flatMap(\.changed).map(\.key).contains("B2"))
        #expect(listings() == before)

        // A new subfolder is not a package: its folder is listed (and the subfolder watched).
        try library.writeNote("Sub/E.note", title: "E")
        try await index.sync()
        #expect(collector.batches.updates.addedPaths.contains("Sub/E.note"))
        #expect(listings() > before)
        #expect(summary(await index.entries) == summary(try await library.configuration().freshScan()))
        await index.close()
    }

    @Test("a folder an event asks to list is listed even if an earlier batch accounted for it at a stamp that already held the change")
    func relistingIsNotHiddenByAnAccountedStamp() async throws {
        let library = try IndexTestLibrary()
        try library.writeNote("A.note", title: "A")
        let index = try DocumentIndex(library.configuration())
        let collector = BatchCollector(index.updates())
        #expect(await collector.wait { $0.first?.kind == .gathered })
        await index.holdEvents(true)
        try library.writeNote("Sub/E.note", title: "E")
        // A batch of events naming hidden items, looked at after `Sub` was made: the library
        // folder is accounted for at a stamp that already holds `Sub`...
        await index.applyLiveChanges(packages: [], accounting: [""], settling: true)
        // ...then `Sub`'s own event, which names a folder: the library folder must be listed.
        await index.applyLiveChanges(packages: [], relisting: [""], settling: true)
        #expect(await index.entries.map(\.relativePath).contains("Sub/E.note"))
        await index.holdEvents(false)
        #expect(summary(await index.entries) == summary(try await library.configuration().freshScan()))
        await index.close()
    }
}
