// dk-crash-child: saves a package in an endless loop until it is killed.
//
//     dk-crash-child PACKAGE (exchange|fallback|versions) START
//
// Saves states START, START+1, ... of a small package document through `Document`, with durable
// saves. Before each save it writes "saving K\n" to standard output, after it "saved K\n",
// unbuffered. `fallback` saves through a file system that refuses `RENAME_EXCHANGE` (as NFS
// does), so every save takes the journaled two-rename swap. `versions` saves with RENAME_EXCHANGE
// and keeps every replaced state in a version store in the package's folder. `zip` saves the
// same document stored as one zip file (`Document.archiveFormat`).
//
// The crash test (Tests/DocumentKitTests/CrashTests.swift) kills this process with SIGKILL at
// random moments and checks what is left; both take the states from `CrashModel`
// (Tests/CrashTestSupport).

#if canImport(Glibc)
import Glibc
#endif
import CrashTestSupport
import DocumentKit
import Foundation

struct CrashState: Sendable {
    var k: Int
}

/// The package document: `state.txt` names the state; every other member follows from it.
class CrashDocument: Document<CrashState>, @unchecked Sendable {
    override func read(from fileWrapper: FileWrapper) throws -> CrashState {
        let text = String(decoding: try fileWrapper["state.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
        guard let k = Int(text) else { throw CocoaError(.fileReadCorruptFile) }
        return CrashState(k: k)
    }

    override func fileWrapper(for content: CrashState, replacing previous: FileWrapper?) throws -> FileWrapper {
        let k = content.k
        let files = CrashModel.files(forState: k)
        var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
        // The previous tree's state tells which members are unchanged; those are kept as they
        // were read or saved, so that the save hard-links them.
        let previousState = (try? previous?["state.txt"]?.regularFileContents).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        let previousFiles = previousState.map(CrashModel.files(forState:)) ?? [:]
        for (path, data) in files where previousFiles[path] != data {
            tree.setFile(atPath: path, data)
        }
        return tree
    }
}

/// The same package with a manifest (`Info.json`, mode `manifested`): its versions are named by
/// their contents, so that a save keeps the replaced package by exchanging it into the store.
final class ManifestedCrashDocument: CrashDocument, @unchecked Sendable {
    static let crashFormat = FormatDescription(identifier: "org.documentkit.test.crash", version: 1)
    override var format: FormatDescription? { Self.crashFormat }
}

/// The same document stored as one zip file (mode `zip`).
final class ZipCrashDocument: CrashDocument, @unchecked Sendable {
    override var archiveFormat: ArchiveFormat? { .zip }
}

extension FileWrapper {
    /// Sets the regular file at a relative path, creating the folders on the way.
    mutating func setFile(atPath path: String, _ data: Data) {
        var components = path.split(separator: "/").map(String.init)
        let name = components.removeLast()
        setFile(components[...], name, data)
    }

    private mutating func setFile(_ folders: ArraySlice<String>, _ name: String, _ data: Data) {
        guard let first = folders.first else {
            self[name] = FileWrapper(regularFileWithContents: data)
            return
        }
        var folder = self[first] ?? FileWrapper(directoryWithFileWrappers: [:])
        if !folder.isDirectory { folder = FileWrapper(directoryWithFileWrappers: [:]) }
        folder.setFile(folders.dropFirst(), name, data)
        self[first] = folder
    }
}

/// Writes `text` to standard output at once (no buffering: the process may die any moment).
func say(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            exit(71)
        }
        bytes = bytes.dropFirst(written)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("dk-crash-child: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments

// dk-crash-child PACKAGE draft DRAFTS K: opens PACKAGE, changes it to state K without saving,
// autosaves elsewhere (a draft in DRAFTS), says "autosaved\n", then waits to be killed
// (RecoveryTests).
if arguments.count == 5, arguments[2] == "draft", let k = Int(arguments[4]) {
    let url = URL(fileURLWithPath: arguments[1])
    let drafts = URL(fileURLWithPath: arguments[3], isDirectory: true)
    final class DraftingDocument: Document<CrashState>, @unchecked Sendable {
        override func read(from fileWrapper: FileWrapper) throws -> CrashState {
            let text = String(decoding: try fileWrapper["state.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
            guard let k = Int(text) else { throw CocoaError(.fileReadCorruptFile) }
            return CrashState(k: k)
        }
        override func fileWrapper(for content: CrashState, replacing previous: FileWrapper?) throws -> FileWrapper {
            var tree = previous ?? FileWrapper(directoryWithFileWrappers: [:])
            tree["state.txt"] = FileWrapper(regularFileWithContents: Data("\(content.k)".utf8))
            return tree
        }
        override var autosaveDraftsFolder: URL {
            URL(fileURLWithPath: ProcessInfo.processInfo.environment["DK_DRAFTS"] ?? "/nonexistent", isDirectory: true)
        }
    }
    setenv("DK_DRAFTS", drafts.path, 1)
    let document: DraftingDocument
    do { document = try await DraftingDocument.open(at: url) } catch { fail("opening \(url.path): \(error)") }
    document.autosavePolicy = AutosavePolicy(quietPeriod: .milliseconds(10), autosavesInPlace: false)
    let events = document.events()
    try document.update { $0.k = k }
    for await event in events {
        if case .saved(.autosaveElsewhere) = event { break }
        if case .saveFailed(_, let error) = event { fail("autosaving: \(error)") }
    }
    say("autosaved\n")
    while true { sleep(1000) }
}

guard arguments.count == 4, ["exchange", "fallback", "versions", "manifested", "manifested-later", "zip"].contains(arguments[2]), let start = Int(arguments[3]) else {
    fail("usage: dk-crash-child PACKAGE (exchange|fallback|versions|manifested|manifested-later|zip) START")
}
let kind: CrashDocument.Type =
    switch arguments[2] {
    case "zip": ZipCrashDocument.self
    case "manifested", "manifested-later": ManifestedCrashDocument.self
    default: CrashDocument.self
    }
let url = URL(fileURLWithPath: arguments[1])
// The fallback runs on a file system that refuses RENAME_EXCHANGE, as FaultInjector(refusingExchange:)
// builds, and that is slow to rename, as NFS is: each rename waits 4 ms first, so that kills also
// land between the two renames of the swap (the package's name briefly missing), not only around them.
let options: SaveOptions
if arguments[2] == "fallback" {
    let slowRenames = FileSystem(
        interceptor: { call, _ in
            if call == .rename { usleep(4_000) }
            return nil
        }, refusesExchange: true)
    options = SaveOptions(durability: .durable, fileSystem: slowRenames)
} else {
    options = SaveOptions(durability: .durable, fileSystem: .live)
}

let document: CrashDocument
if FileManager.default.fileExists(atPath: url.path) {
    do { document = try await kind.open(at: url, saveOptions: options) } catch {
        fail("opening \(url.path): \(error)")
    }
} else {
    let first = CrashState(k: start - 1)
    document =
        switch arguments[2] {
        case "zip": ZipCrashDocument(fileURL: url, content: first, saveOptions: options)
        case "manifested", "manifested-later": ManifestedCrashDocument(fileURL: url, content: first, saveOptions: options)
        default: CrashDocument(fileURL: url, content: first, saveOptions: options)
        }
}

if ["versions", "manifested", "manifested-later"].contains(arguments[2]) {
    // manifested-later: each save returns before the version it keeps is complete (as `notes serve`).
    document.versionStore = VersionStore(
        libraryURL: url.deletingLastPathComponent(), pruning: .keepAll, durability: .durable,
        versionCompletion: arguments[2] == "manifested-later" ? .afterSaveReturns : .beforeSaveReturns)
}

var k = start
while true {
    try document.update { $0.k = k }
    say("saving \(k)\n")
    do { try await document.save() } catch {
        fail("saving state \(k): \(error)")
    }
    say("saved \(k)\n")
    k += 1
}
