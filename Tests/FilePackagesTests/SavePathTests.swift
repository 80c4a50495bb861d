#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import DocumentKitTesting
import Foundation
import Testing

@testable import FilePackages

@Suite struct SavePathTests {
    @Test("a new file is created with the contents, and the returned wrapper matches it")
    func newFile() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        let saved = try file("hello").write(to: url)
        #expect(read(url) == "hello")
        #expect(saved.matchesContents(of: url))
        #expect(try text(saved) == "hello")
        #expect(mode(url) == 0o644)  // 0o666 less the umask
        #expect(try dir.contents() == ["note.txt"])
    }

    @Test("an existing file is replaced by a new inode; the old one is never written to")
    func replaceFile() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("note.txt")
        try put("old", at: url)
        let oldInode = inode(url)
        let keep = open(url.path, O_RDONLY)
        defer { close(keep) }
        try file("new contents").write(to: url)
        #expect(read(url) == "new contents")
        #expect(inode(url) != oldInode)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(pread(keep, &buffer, 16, 0) == 3)  // the old file still holds the old bytes
        #expect(try dir.contents() == ["note.txt"])
    }

    @Test("a new package is created with every member, nested folders included")
    func newPackage() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        #expect(snapshot(url) == [
            "": .directory, "Info.json": .file(Data(#"{"format":"sample"}"#.utf8)), "body.md": .file(Data("the body".utf8)),
            "attachments": .directory, "attachments/a.txt": .file(Data("A".utf8)),
            "attachments/deep": .directory, "attachments/deep/b.txt": .file(Data("B".utf8)),
        ])
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    @Test("replacing a package hard-links unchanged members and writes changed ones")
    func replacePackageLinksUnchanged() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let bInode = inode(url.appendingPathComponent("attachments/deep/b.txt"))
        let aInode = inode(url.appendingPathComponent("attachments/a.txt"))
        let bodyInode = inode(url.appendingPathComponent("body.md"))
        let packageInode = inode(url)
        var tree = try FileWrapper(contentsOf: url)
        tree["body.md"] = file("new body")
        let saved = try tree.write(to: url)
        #expect(inode(url) != packageInode)
        #expect(inode(url.appendingPathComponent("attachments/deep/b.txt")) == bInode)
        #expect(inode(url.appendingPathComponent("attachments/a.txt")) == aInode)
        #expect(inode(url.appendingPathComponent("body.md")) != bodyInode)
        #expect(read(url.appendingPathComponent("body.md")) == "new body")
        #expect(status(url.appendingPathComponent("attachments/a.txt")).st_nlink == 1)  // the old tree is gone
        #expect(try dir.contents() == ["Doc.pkg"])
        // The returned wrapper links again on the next save.
        var next = saved
        next["Info.json"] = file("{}")
        try next.write(to: url)
        #expect(inode(url.appendingPathComponent("attachments/a.txt")) == aInode)
        #expect(read(url.appendingPathComponent("body.md")) == "new body")
    }

    @Test("the wrapper a save returns reads every member, linked ones too, after later saves from it")
    func returnedWrapperStaysReadable() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        var tree = try FileWrapper(contentsOf: url)
        for round in 1...3 {
            tree["body.md"] = file("round \(round)")
            tree = try tree.write(to: url)
            #expect(try text(tree.fileWrapper(atPath: "attachments/deep/b.txt")) == "B")
            #expect(try text(tree["body.md"]) == "round \(round)")
            #expect(tree.matchesContents(of: url))
        }
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    @Test("members added, removed and renamed are saved as such")
    func addRemoveRename() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        let aInode = inode(url.appendingPathComponent("attachments/a.txt"))
        var tree = try FileWrapper(contentsOf: url)
        tree["added.txt"] = file("added")
        tree["Info.json"] = nil
        let moved = tree["attachments"]!["a.txt"]!
        tree["attachments"]!["a.txt"] = nil
        tree["attachments"]!["renamed.txt"] = moved
        tree["attachments"]!["deep"]!["deeper"] = folder(["c.txt": file("C")])
        try tree.write(to: url)
        #expect(snapshot(url) == [
            "": .directory, "added.txt": .file(Data("added".utf8)), "body.md": .file(Data("the body".utf8)),
            "attachments": .directory, "attachments/renamed.txt": .file(Data("A".utf8)),
            "attachments/deep": .directory, "attachments/deep/b.txt": .file(Data("B".utf8)),
            "attachments/deep/deeper": .directory, "attachments/deep/deeper/c.txt": .file(Data("C".utf8)),
        ])
        #expect(inode(url.appendingPathComponent("attachments/renamed.txt")) == aInode)
    }

    @Test("symbolic links in a package are saved as links, with their destinations as given")
    func linksInPackage() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        var tree = samplePackage()
        tree["current"] = FileWrapper(symbolicLinkWithDestination: "attachments/a.txt")
        tree["attachments"]!["out"] = FileWrapper(symbolicLinkWithDestination: "/nonexistent/elsewhere")
        try tree.write(to: url)
        #expect(snapshot(url)["current"] == .link("attachments/a.txt"))
        #expect(snapshot(url)["attachments/out"] == .link("/nonexistent/elsewhere"))
        // Read back and saved again, links stay links.
        var again = try FileWrapper(contentsOf: url)
        again["body.md"] = file("x")
        try again.write(to: url)
        #expect(snapshot(url)["current"] == .link("attachments/a.txt"))
        #expect(snapshot(url)["attachments/out"] == .link("/nonexistent/elsewhere"))
    }

    @Test("a file member of a package keeps the permissions it was given")
    func memberPermissions() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try folder(["private.txt": file("p", permissions: 0o600), "tool": file("#!", permissions: 0o755),
                    "sub": FileWrapper(directoryWithFileWrappers: [:], permissions: 0o700)]).write(to: url)
        #expect(mode(url.appendingPathComponent("private.txt")) == 0o600)
        #expect(mode(url.appendingPathComponent("tool")) == 0o755)
        #expect(mode(url.appendingPathComponent("sub")) == 0o700)
        #expect(mode(url) == 0o755)
    }

    @Test("a durable save flushes files and folders; a consistent one flushes nothing")
    func durability() throws {
        for (durability, flushes) in [(Durability.durable, true), (.consistent, false)] {
            for isPackage in [true, false] {
                let dir = try TemporaryDirectory()
                let url = dir.appending(isPackage ? "Doc.pkg" : "note.txt")
                let tree = isPackage ? samplePackage() : file("first")
                try tree.write(to: url)
                var next = try FileWrapper(contentsOf: url)
                if isPackage { next["body.md"] = file("changed") } else { next = file("second") }
                let faults = FaultInjector()
                try next.write(to: url, options: SaveOptions(durability: durability, fileSystem: faults.fileSystem))
                let calls = faults.trace.map(\.call)
                #expect(calls.contains(.synchronize) == flushes, "\(durability) \(isPackage): \(faults.trace)")
                #expect(calls.contains(.synchronizeDirectory) == flushes, "\(durability) \(isPackage): \(faults.trace)")
                if isPackage {
                    #expect(read(url.appendingPathComponent("body.md")) == "changed")
                    // one flush per new folder (root, attachments, deep) and one of the parent
                    if flushes { #expect(calls.filter { $0 == .synchronizeDirectory }.count == 4, "\(faults.trace)") }
                } else {
                    #expect(read(url) == "second")
                }
                #expect(try dir.contents() == [url.lastPathComponent])
            }
        }
    }

    @Test("a durable package save starts each member’s writeback as it writes it and flushes a folder’s members together, with the folder and before the swap, at most 16 at a time")
    func membersAreFlushedTogether() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        var members: [String: FileWrapper] = ["sub": folder(["inner.txt": file("inner")])]
        for index in 0..<40 { members["m\(index).txt"] = file("member \(index)") }
        try folder(["old.txt": file("old")]).write(to: url)
        let faults = FaultInjector()
        try folder(members).write(to: url, options: SaveOptions(durability: .durable, fileSystem: faults.fileSystem))
        let trace = faults.trace
        let swap = try #require(trace.firstIndex { $0.call == .exchange }, "\(trace)")
        let subFolder = try #require(trace.firstIndex { $0.call == .synchronizeDirectory && $0.name == "sub" }, "\(trace)")
        let written = (0..<40).map { "m\($0).txt" } + ["sub/inner.txt"]
        for member in written {
            let started = try #require(trace.firstIndex { $0.call == .startWriteback && $0.name == member }, "\(member)")
            let flushed = try #require(trace.firstIndex { $0.call == .synchronize && $0.name == member }, "\(member)")
            #expect(started < flushed && flushed < swap, "\(member): \(trace)")
        }
        #expect(try #require(trace.firstIndex { $0.call == .synchronize && $0.name == "sub/inner.txt" }) < subFolder)
        // The top folder's members: never more than 16 written and not flushed yet, and more than one.
        var held = 0
        var most = 0
        for call in trace where !call.name.contains("/") {
            if call.call == .startWriteback { held += 1 }
            if call.call == .synchronize { held -= 1 }
            most = max(most, held)
        }
        #expect(most == PendingFlushes.limit, "\(trace)")
        #expect(try FileWrapper(contentsOf: url).fileWrapper(atPath: "m39.txt") != nil)
        #expect(try dir.contents() == ["Doc.pkg"])
    }

    @Test("a durable save of a package nested deep holds at most 16 written files unflushed in the whole tree, each flushed with or before its folder")
    func deepPackagesHoldFewFilesOpen() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Deep.pkg")
        var level = folder(["last.txt": file("last")])
        for depth in (0..<40).reversed() {
            var members: [String: FileWrapper] = ["sub": level]
            for index in 0..<15 { members["f\(index).txt"] = file("\(depth).\(index)") }
            level = folder(members)
        }
        let faults = FaultInjector()
        try level.write(to: url, options: SaveOptions(durability: .durable, fileSystem: faults.fileSystem))
        var held = 0
        var most = 0
        var unflushed: Set<String> = []
        for call in faults.trace {
            switch call.call {
            case .startWriteback:
                held += 1
                unflushed.insert(call.name)
            case .synchronize:
                held -= 1
                unflushed.remove(call.name)
            case .synchronizeDirectory:
                // A folder's flush comes after every file in it.
                #expect(!unflushed.contains { $0.hasPrefix(call.name + "/") }, "\(call.name)")
            default: break
            }
            most = max(most, held)
        }
        #expect(most <= PendingFlushes.limit && most > 1, "\(most)")
        #expect(held == 0 && unflushed.isEmpty)
        let path = Array(repeating: "sub", count: 40).joined(separator: "/") + "/last.txt"
        #expect(try FileWrapper(contentsOf: url).fileWrapper(atPath: path) != nil)
    }

    @Test("a batched durable package save flushes its new tree with one syncfs before the swap and the folder after it; a file save flushes as a durable one")
    func batchedDurability() throws {
        for isPackage in [true, false] {
            let dir = try TemporaryDirectory()
            let url = dir.appending(isPackage ? "Doc.pkg" : "note.txt")
            try (isPackage ? samplePackage() : file("first")).write(to: url)
            var next = try FileWrapper(contentsOf: url)
            if isPackage { next["body.md"] = file("changed") } else { next = file("second") }
            let faults = FaultInjector()
            try next.write(to: url, options: SaveOptions(durability: .durableBatched, fileSystem: faults.fileSystem))
            let calls = faults.trace.map(\.call)
            if isPackage {
                #expect(read(url.appendingPathComponent("body.md")) == "changed")
                #expect(!calls.contains(.synchronize), "\(faults.trace)")
                #expect(calls.filter { $0 == .synchronizeFileSystem }.count == 1, "\(faults.trace)")
                #expect(calls.filter { $0 == .synchronizeDirectory }.count == 1, "\(faults.trace)")
                // Order: the new tree is on disk before the swap; the swap is flushed after it.
                let flush = try #require(calls.firstIndex(of: .synchronizeFileSystem))
                let swap = try #require(calls.firstIndex(of: .exchange))
                let folder = try #require(calls.firstIndex(of: .synchronizeDirectory))
                #expect(flush < swap && swap < folder, "\(faults.trace)")
            } else {
                #expect(read(url) == "second")
                #expect(calls.contains(.synchronize) && calls.contains(.synchronizeDirectory), "\(faults.trace)")
            }
            #expect(try dir.contents() == [url.lastPathComponent])
        }
    }

    @Test("a batched save whose file system flush fails is no save: the package is as it was")
    func batchedFlushFailure() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url)
        var next = try FileWrapper(contentsOf: url)
        next["body.md"] = file("changed")
        let faults = FaultInjector()
        faults.fail(.synchronizeFileSystem, with: .ioError)
        #expect(throws: DocumentKitError.self) {
            try next.write(to: url, options: SaveOptions(durability: .durableBatched, fileSystem: faults.fileSystem))
        }
        #expect(read(url.appendingPathComponent("body.md")) != "changed")
        #expect(try dir.contents() == [url.lastPathComponent])
    }

    @Test("without RENAME_EXCHANGE, packages and files are still replaced completely", arguments: [Durability.durable, .consistent])
    func fallbackPath(durability: Durability) throws {
        let dir = try TemporaryDirectory()
        let faults = FaultInjector(refusingExchange: true)
        let options = SaveOptions(durability: durability, fileSystem: faults.fileSystem)
        let url = dir.appending("Doc.pkg")
        try samplePackage().write(to: url, options: options)
        let aInode = inode(url.appendingPathComponent("attachments/a.txt"))
        var tree = try FileWrapper(contentsOf: url)
        tree["body.md"] = file("changed")
        tree["Info.json"] = nil
        try tree.write(to: url, options: options)
        #expect(!faults.trace.contains { $0.call == .exchange })
        #expect(faults.trace.contains { $0.name.hasSuffix(".dk-intent") })
        #expect(read(url.appendingPathComponent("body.md")) == "changed")
        #expect(snapshot(url)["Info.json"] == nil)
        #expect(inode(url.appendingPathComponent("attachments/a.txt")) == aInode)
        let note = dir.appending("note.txt")
        try file("one").write(to: note, options: options)
        try file("two").write(to: note, options: options)
        #expect(read(note) == "two")
        #expect(try dir.contents() == ["Doc.pkg", "note.txt"])
    }

    @Test("a file can be replaced by a package and a package by a file", arguments: [false, true])
    func changeOfKind(refusingExchange: Bool) throws {
        let dir = try TemporaryDirectory()
        let options = SaveOptions(fileSystem: FaultInjector(refusingExchange: refusingExchange).fileSystem)
        let url = dir.appending("Doc")
        try file("a file").write(to: url, options: options)
        try samplePackage().write(to: url, options: options)
        #expect(try FileWrapper(contentsOf: url) == samplePackage())
        #expect(mode(url) & 0o111 == 0o111, "a package must be searchable, not get the file's mode")
        #expect(try dir.contents() == ["Doc"])
        try file("a file again").write(to: url, options: options)
        #expect(read(url) == "a file again")
        #expect(try dir.contents() == ["Doc"])
    }

    @Test("an invalid member name or a symbolic link as the document is refused, and nothing is written")
    func invalidTrees() throws {
        let dir = try TemporaryDirectory()
        let url = dir.appending("Doc.pkg")
        for name in ["", ".", "..", "a/b"] {
            let error = #expect(throws: DocumentKitError.self) { try folder([name: file("x")]).write(to: url) }
            #expect(error?.code == .invalidArgument)
        }
        let error = #expect(throws: DocumentKitError.self) {
            try FileWrapper(symbolicLinkWithDestination: "x").write(to: url)
        }
        #expect(error?.code == .invalidArgument)
        #expect(try dir.contents().isEmpty)
    }
}
