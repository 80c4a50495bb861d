// dk-coordination-child: a second (third...) process for the coordination tests
// (Tests/FileCoordinationTests).
//
//     dk-coordination-child hold NAMESPACE_DIR EXTS OP PATH HOLD_MS [ACTION]
//
// Coordinates PATH with OP (read, write, delete, move, replace: delete/move/replace are writes
// with forDeleting/forMoving/forReplacing) in the namespace NAMESPACE_DIR, whose package
// extensions are the comma list EXTS (`-` for none). It prints `started <ns>` right before it
// asks for access, `granted <ns>` when the accessor starts, then holds the access HOLD_MS
// milliseconds, or less if a line arrives on standard input, then prints `released <ns>` as the
// accessor returns, and exits 0. ACTION `remove` deletes the item at the end of the hold, right
// before `released`; ACTION `move=NEWPATH` moves it there and announces the move
// (`item(at:didMoveTo:)`).
//
//     dk-coordination-child increment NAMESPACE_DIR EXTS PATH COUNT [COORDINATED_PATH]
//
// COUNT times: a coordinated write of COORDINATED_PATH (default PATH) that reads the integer in
// PATH, adds 1 and writes it back with a plain, non-atomic write (truncate, then write). Exits 1
// if it ever reads something that is not an integer.
//
//     dk-coordination-child present NAMESPACE_DIR EXTS PATH BEHAVIOUR
//
// Registers a presenter of PATH, prints `ready <pid>`, then one line per callback
// (`save`, `relinquish-reader`, `relinquish-writer`, `reacquire`, `deletion`, `changed`, and
// `subitem-deletion NAME present|gone`: whether the subitem still existed when the callback ran)
// until a line arrives on standard input or it closes. BEHAVIOUR: `log` (only that), `slow` (takes
// 10 s to relinquish or to accommodate a subitem's deletion), `nested` (tries to coordinate a read
// of PATH from inside the relinquish callback and prints `nested-refused` or `nested-ran`),
// `save=TEXT` (writes TEXT to PATH when asked to save).
//
//     dk-coordination-child race NAMESPACE_DIR EXTS LIBRARY_DIR PACKAGE_NAME ROUNDS TAG [zip]
//
// Saves the package PACKAGE_NAME in LIBRARY_DIR (a `RaceNoteDocument` (RaceTestSupport): a body in `body.txt` and the
// manifest `Info.json`) ROUNDS times, as a `Document` with a coordinator on the namespace and the
// library's version store (both write with durability `consistent`: no flushes). Round r: waits for a line on standard input (so that a test can let
// every racer open the same state), opens the document and prints `opened r BODY <ns>` (BODY: the
// body it read), waits for another line (the barrier: a test releases every racer at once), sets
// the body to `TAG-r`, saves, prints `saved r TAG-r CONFLICT <ns>` (CONFLICT: the id of the
// conflict version the save kept, or `-`), and closes the document. Exits 1 if standard input
// closes before a round is done.
//
//     dk-coordination-child saves NAMESPACE_DIR EXTS LIBRARY_DIR NAME COUNT KIND VERSIONS
//
// Saves its own document LIBRARY_DIR/NAME COUNT times (KIND `package`: a `RaceNoteDocument`;
// `file`: a `RaceTextDocument`), its content the round's number, with the library's version store
// when VERSIONS is `store` (`none`: without). Prints `failed ROUND MESSAGE` for each failed save and
// `done FAILURES` at the end (see SavesMode.swift).
//
//     dk-coordination-child edit NAMESPACE_DIR EXTS LIBRARY_DIR NAME BODY
//
// Opens the note LIBRARY_DIR/NAME (a `RaceNoteDocument` with the library's version store),
// prints `opened BODY`, waits for a line on standard input, saves BODY as its body, prints `saved CONFLICT` and exits.
//
//     dk-coordination-child resources NAMESPACE_DIR EXTS LIBRARY_DIR COUNT FOLDERS [NOFILE]
//
// Makes COUNT notes (`RaceNoteDocument`) spread over FOLDERS folders of LIBRARY_DIR, then opens
// them all as presenting documents, saves them all at once, closes them, printing
// `measure STEP FDS THREADS WATCHES` (open descriptors, threads, inotify watches) for the steps
// `base`, `opened`, `saving` (the peak while saving), `saved`, `closed` and `shut` (after the
// namespace's `close()`), under a descriptor limit of NOFILE if given (see ResourcesMode.swift).
//
//     dk-coordination-child lock-file PATH
//
// Opens the file PATH and takes a POSIX write lock on all of it (`F_SETLK`, which conflicts with
// the coordinations' open-file-description locks), prints `locked` (or `refused ERRNO`), and holds
// it until a line arrives on standard input or it closes: another user's hold on a lock file.
//
//     dk-coordination-child draft PATH TEXT
//
// Makes a new, never saved `RaceTextDocument` for PATH with the content TEXT, in the default
// drafts folder and namespace, and waits for its first autosave: prints `drafted DRAFT_PATH` and
// exits 0, or `failed CODE FOLDER_OR_PATH` and exits 1.
//
// Times are CLOCK_MONOTONIC nanoseconds, comparable across the processes of one machine; every
// line is flushed at once. Exit status 2: bad arguments; 3: the coordination failed.

#if canImport(Glibc)
import Glibc
#endif
import DocumentKit
import RaceTestSupport
import Foundation

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func say(_ line: String) {
    let text = line + "\n"
    text.utf8CString.withUnsafeBufferPointer { buffer in
        var offset = 0
        let count = buffer.count - 1
        while offset < count {
            let written = write(1, buffer.baseAddress! + offset, count - offset)
            if written < 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data(("dk-coordination-child: " + message + "\n").utf8))
    exit(status)
}

/// Sleeps `milliseconds`, or less if a line (any input) arrives on standard input.
func hold(milliseconds: Int) {
    let deadline = monotonicNanoseconds() + UInt64(max(milliseconds, 0)) * 1_000_000
    var inputOpen = true
    while true {
        let now = monotonicNanoseconds()
        guard now < deadline else { return }
        let remaining = Int32(clamping: (deadline - now) / 1_000_000 + 1)
        if inputOpen {
            var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready > 0 {
                var byte: UInt8 = 0
                let count = read(0, &byte, 1)
                if count > 0 { return }  // told to release
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) { inputOpen = false }  // no input: hold the time
            }
        } else {
            usleep(useconds_t(min(Int(remaining) * 1000, 100_000)))
        }
    }
}

let arguments = CommandLine.arguments
// The modes that make no namespace of their own.
switch arguments.count >= 3 ? arguments[1] : "" {
case "lock-file":
    let fd = open(arguments[2], O_RDWR | O_CLOEXEC)
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    if fd < 0 || fcntl(fd, F_SETLK, &lock) < 0 {
        say("refused \(errno)")
        exit(1)
    }
    say("locked")
    var byte: UInt8 = 0
    while read(0, &byte, 1) < 0 && errno == EINTR {}
    exit(0)
case "draft":
    guard arguments.count >= 4 else { fail("draft: bad arguments", status: 2) }
    let document = RaceTextDocument(fileURL: URL(fileURLWithPath: arguments[2]), content: arguments[3])
    // The first autosave comes after the policy's quiet period (2 s): subscribed long before.
    for await event in document.events() {
        switch event {
        case .saved(.autosaveElsewhere):
            say("drafted \(document.autosavedContentsURL?.path ?? "?")")
            exit(0)
        case .saveFailed(_, let error):
            say("failed \(error.code) \(error.path)")
            exit(1)
        default: continue
        }
    }
    fail("draft: no autosave", status: 3)
default: break
}
guard arguments.count >= 4 else {
    fail(
        "usage: hold NAMESPACE_DIR EXTS OP PATH HOLD_MS [remove] | increment NAMESPACE_DIR EXTS PATH COUNT [COORDINATED_PATH]"
            + " | present NAMESPACE_DIR EXTS PATH BEHAVIOUR | race NAMESPACE_DIR EXTS LIBRARY_DIR PACKAGE_NAME ROUNDS TAG",
        status: 2)
}
let extensions = arguments[3] == "-" ? [] : Set(arguments[3].split(separator: ",").map(String.init))
let coordinator: FileCoordinator
do {
    coordinator = FileCoordinator(
        namespace: try CoordinationNamespace(directory: URL(fileURLWithPath: arguments[2]), packageExtensions: extensions))
} catch {
    fail("namespace: \(error)", status: 3)
}

switch arguments[1] {
case "hold":
    guard arguments.count >= 7, let milliseconds = Int(arguments[6]) else { fail("hold: bad arguments", status: 2) }
    let url = URL(fileURLWithPath: arguments[5])
    let removes = arguments.count > 7 && arguments[7] == "remove"
    let moveTo = arguments.count > 7 && arguments[7].hasPrefix("move=") ? String(arguments[7].dropFirst(5)) : nil
    let access: (URL) throws -> Void = { resolved in
        say("granted \(monotonicNanoseconds())")
        hold(milliseconds: milliseconds)
        if removes { try FileManager.default.removeItem(at: resolved) }
        if let moveTo {
            try FileManager.default.moveItem(at: resolved, to: URL(fileURLWithPath: moveTo))
            try coordinator.item(at: resolved, didMoveTo: URL(fileURLWithPath: moveTo))
        }
        say("released \(monotonicNanoseconds())")
    }
    say("started \(monotonicNanoseconds())")
    do {
        switch arguments[4] {
        case "read": try coordinator.coordinate(readingItemAt: url, byAccessor: access)
        case "write": try coordinator.coordinate(writingItemAt: url, byAccessor: access)
        case "delete": try coordinator.coordinate(writingItemAt: url, options: .forDeleting, byAccessor: access)
        case "move": try coordinator.coordinate(writingItemAt: url, options: .forMoving, byAccessor: access)
        case "replace": try coordinator.coordinate(writingItemAt: url, options: .forReplacing, byAccessor: access)
        default: fail("hold: unknown operation \(arguments[4])", status: 2)
        }
    } catch {
        fail("hold: \(error)", status: 3)
    }

case "increment":
    guard arguments.count >= 6, let count = Int(arguments[5]) else { fail("increment: bad arguments", status: 2) }
    let path = arguments[4]
    let coordinated = URL(fileURLWithPath: arguments.count > 6 ? arguments[6] : path)
    for _ in 0..<count {
        do {
            try coordinator.coordinate(writingItemAt: coordinated) { _ in
                let text = try String(contentsOfFile: path, encoding: .utf8)
                guard let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    fail("increment: read \(text.debugDescription) from \(path)", status: 1)
                }
                usleep(200)  // widen the window an uncoordinated writer would hit
                let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
                guard fd >= 0 else { fail("increment: open \(path): errno \(errno)", status: 1) }
                defer { close(fd) }
                let bytes = Array("\(value + 1)\n".utf8)
                guard write(fd, bytes, bytes.count) == bytes.count else { fail("increment: write: errno \(errno)", status: 1) }
            }
        } catch {
            fail("increment: \(error)", status: 3)
        }
    }

case "present":
    guard arguments.count >= 6 else { fail("present: bad arguments", status: 2) }
    let presenter = LoggingPresenter(url: URL(fileURLWithPath: arguments[4]), behaviour: arguments[5], coordinator: coordinator)
    let registration = coordinator.namespace.addPresenter(presenter)
    say("ready \(getpid())")
    var byte: UInt8 = 0
    while read(0, &byte, 1) < 0 && errno == EINTR {}
    registration.remove()

case "race":
    guard arguments.count >= 8, let rounds = Int(arguments[6]), rounds >= 1 else { fail("race: bad arguments", status: 2) }
    let library = URL(fileURLWithPath: arguments[4])
    await race(
        url: library.appendingPathComponent(arguments[5]), library: library, rounds: rounds, tag: arguments[7],
        zip: arguments.count > 8 && arguments[8] == "zip", coordinator: coordinator)

case "saves":
    guard arguments.count >= 9, let count = Int(arguments[6]), count >= 1 else { fail("saves: bad arguments", status: 2) }
    let library = URL(fileURLWithPath: arguments[4])
    await saveRepeatedly(
        url: library.appendingPathComponent(arguments[5]), library: library, count: count, kind: arguments[7],
        keepsVersions: arguments[8] == "store", coordinator: coordinator)

case "resources":
    guard arguments.count >= 7, let count = Int(arguments[5]), let folders = Int(arguments[6]) else {
        fail("resources: bad arguments", status: 2)
    }
    // A background load: the tests running beside it keep their timing.
    _ = nice(10)
    if arguments.count > 7, let limit = rlim_t(arguments[7]) {
        var descriptors = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
        descriptors.rlim_cur = min(limit, descriptors.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
    }
    await measureResources(library: URL(fileURLWithPath: arguments[4]), count: count, folders: folders, coordinator: coordinator)

case "edit":
    guard arguments.count >= 7 else { fail("edit: bad arguments", status: 2) }
    let library = URL(fileURLWithPath: arguments[4])
    await editOnce(url: library.appendingPathComponent(arguments[5]), library: library, body: arguments[6], coordinator: coordinator)

default:
    fail("unknown command \(arguments[1])", status: 2)
}
exit(0)

/// Reads standard input up to the end of a line; exits 1 if it closes first.
func awaitLine(_ purpose: String) {
    var byte: UInt8 = 0
    while true {
        let count = read(0, &byte, 1)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { fail("race: standard input closed while waiting to \(purpose)", status: 1) }
        if byte == UInt8(ascii: "\n") { return }
    }
}

/// The `race` mode: see the header.
func race(url: URL, library: URL, rounds: Int, tag: String, zip: Bool, coordinator: FileCoordinator) async {
    for round in 1...rounds {
        awaitLine("open round \(round)")
        // Consistent, not durable: a killed process is what the tests simulate, not a power cut.
        let kind: RaceNoteDocument.Type = zip ? RaceZipNoteDocument.self : RaceNoteDocument.self
        let document = kind.init(fileURL: url, saveOptions: SaveOptions(durability: .consistent), coordinator: coordinator)
        document.versionStore = VersionStore(libraryURL: library, coordinator: coordinator, durability: .consistent)
        // Both racers must save from the base they opened: a presenting document would reload the
        // other's save while it waits at the barrier (clean), and its save would then not conflict.
        document.presentsFile = false
        document.autosavePolicy = nil
        do { try await document.open() } catch { fail("race: round \(round): open: \(error)", status: 3) }
        say("opened \(round) \(document.content) \(monotonicNanoseconds())")
        awaitLine("save round \(round)")
        let body = "\(tag)-\(round)"
        do {
            try document.update { $0 = body }
            try await document.save()
        } catch {
            fail("race: round \(round): save: \(error)", status: 3)
        }
        say("saved \(round) \(body) \(document.lastConflictVersion?.persistentIdentifier ?? "-") \(monotonicNanoseconds())")
        do { try await document.close() } catch { fail("race: round \(round): close: \(error)", status: 3) }
    }
}

/// A presenter that reports its callbacks on standard output.
final class LoggingPresenter: FilePresenter {
    let presentedItemURL: URL?
    let behaviour: String
    let coordinator: FileCoordinator

    init(url: URL, behaviour: String, coordinator: FileCoordinator) {
        presentedItemURL = url
        self.behaviour = behaviour
        self.coordinator = coordinator
    }

    func savePresentedItemChanges() async throws {
        say("save")
        if behaviour.hasPrefix("save=") {
            try Data(behaviour.dropFirst(5).utf8).write(to: presentedItemURL!)
        }
    }

    func relinquishPresentedItemToReader() async -> (@Sendable () async -> Void)? {
        say("relinquish-reader")
        await misbehave()
        return { say("reacquire") }
    }

    func relinquishPresentedItemToWriter() async -> (@Sendable () async -> Void)? {
        say("relinquish-writer")
        await misbehave()
        return { say("reacquire") }
    }

    func accommodatePresentedItemDeletion() async { say("deletion") }
    func presentedItemDidChange() async { say("changed") }

    func accommodatePresentedSubitemDeletion(at url: URL) async {
        say("subitem-deletion \(url.lastPathComponent) \(FileManager.default.fileExists(atPath: url.path) ? "present" : "gone")")
        if behaviour == "slow" { try? await Task.sleep(for: .seconds(10)) }
    }

    private func misbehave() async {
        if behaviour == "slow" { try? await Task.sleep(for: .seconds(10)) }
        if behaviour == "nested" {
            do {
                try coordinator.coordinate(readingItemAt: presentedItemURL!) { _ in }
                say("nested-ran")
            } catch {
                say("nested-refused")
            }
        }
    }
}
